"""yangkey: YANG Message Keys for Message Broker Integration.

Implements draft-ietf-nmop-yang-message-broker-message-key.
"""
