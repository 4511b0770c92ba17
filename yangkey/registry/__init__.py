"""Schema registry edge: a Confluent-compatible REST API stored in a compacted Kafka topic
(seed 003), JSON Schemas of derived topics generated from YANG, and the producer's client.

Imports the core; the core never imports this package.
"""
