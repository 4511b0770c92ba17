"""Example subscriptions; installed as ``yangkey.examples`` (``yangkey demo``, ``yangkey init``)."""
