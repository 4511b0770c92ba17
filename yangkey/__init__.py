"""yangkey: YANG Message Keys for Message Broker Integration.

Implements draft-ietf-nmop-yang-message-broker-message-key.

The modules at the top level are the core: no Kafka, Spark or ClickHouse client, no CLI. In
reading order, each importing only modules listed above it (tests/unit/test_import_graph.py
holds this map to the code):

Foundations
    :mod:`yangkey.errors` (the one exception root, the error kinds),
    :mod:`yangkey.dirs` (the cache and state roots), :mod:`yangkey.fleet` (a subscription's
    identity: node and id), :mod:`yangkey.inputs` (bounded reads of untrusted files),
    :mod:`yangkey.xmlsafe` (the hardened XML parser), :mod:`yangkey.xpath` (the subscription
    XPath subset), :mod:`yangkey.values` (canonical key values), :mod:`yangkey.features`
    (``if-feature`` expressions).
YANG schema
    :mod:`yangkey.modules` (module headers, the search path, the module index),
    :mod:`yangkey.schema_cache` (the on-disk cache), :mod:`yangkey.schema_data` (module files
    parsed, yangson's schema data), :mod:`yangkey.schema_build` (a yangson data model from
    vendor modules), :mod:`yangkey.library` (the YANG library),
    :mod:`yangkey.missing` (why a node is not in the schema), :mod:`yangkey.schema` (the
    schema context), :mod:`yangkey.canon_types` (a key leaf's canonical form).
The wire contract
    :mod:`yangkey.messages` (the message key, the headers, the ClickHouse column sets).
Notifications
    :mod:`yangkey.notification_model` (a decoded notification),
    :mod:`yangkey.xmltree` (XML elements to the RFC 7951 tree), :mod:`yangkey.xmlnotifications`
    (XML), :mod:`yangkey.notifications` (JSON, and the
    decoding entry point), :mod:`yangkey.native` (the optional compiled decoder).
Phases 1 and 2: a subscription compiled
    :mod:`yangkey.subtree` (subtree filter to XPath), :mod:`yangkey.compiled` (what a
    compiled subscription is), :mod:`yangkey.templates` (XPath and schema to branches and key
    templates), :mod:`yangkey.compiler` (the one entry point, through the caches),
    :mod:`yangkey.topics` (topic names), :mod:`yangkey.diagnosis` (why a notification has no
    instance).
Phase 3: a notification keyed
    :mod:`yangkey.walker` (a generated walker per branch), :mod:`yangkey.patch` (yang-patch
    edits), :mod:`yangkey.keys` (the key derivation).
The catalog
    :mod:`yangkey.config` (the subscriptions file), :mod:`yangkey.shared_catalog` (the
    records of the shared catalog topic), :mod:`yangkey.entries` (a catalog entry),
    :mod:`yangkey.catalog` (subscriptions file to compiled catalog, learning).
The producer
    :mod:`yangkey.instances` (the instance feed), :mod:`yangkey.producer` (raw bytes to keyed
    messages or a rejection).
For the edges
    :mod:`yangkey.jvm` (the JDK, JVM processes), :mod:`yangkey.summary` (a stored message in
    one line).

The packages sit above the core: the edges :mod:`yangkey.kafka`, :mod:`yangkey.registry`,
:mod:`yangkey.spark`, :mod:`yangkey.clickhouse`, :mod:`yangkey.dashboards` and
:mod:`yangkey.report`, :mod:`yangkey.inspection` (doctor, topics, tail); above them the
drivers, :mod:`yangkey.cli` (its support modules ship with the core) and :mod:`yangkey.demo`.
"""
