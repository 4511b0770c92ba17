"""yangkey: YANG Message Keys for Message Broker Integration (draft-ietf-nmop-yang-message-broker-message-key)."""
