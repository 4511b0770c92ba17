"""Looking at what yangkey wrote and at the installation: ``yangkey doctor`` (checks, like
``dbt debug``), ``yangkey kafka topics`` (the topics with their layout and sizes) and
``yangkey tail TOPIC`` (messages with key, headers and decoded value, like kcat).

* :mod:`yangkey.inspection.doctor`: the checks, one :class:`~yangkey.inspection.doctor.Check`
  each;
* :mod:`yangkey.inspection.topics`: listing topics;
* :mod:`yangkey.inspection.tail`: reading and decoding messages;
* :mod:`yangkey.inspection.commands`: the ``click`` commands.
"""
