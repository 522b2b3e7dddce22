"""truc-protocol: the ``truc.v1`` protocol for Python, shared by servers and clients.

* ``truc.v1``: the generated messages and gRPC stubs (``make proto`` writes them,
  never edited by hand), with their type stubs.
* :mod:`truc_protocol.convert`: proto <-> rules conversion (cards, actions,
  options, events, views); a malformed message raises
  :class:`~truc_protocol.convert.ProtocolError` naming the field.
* :mod:`truc_protocol.balancing`: the channel and server options that spread
  calls over every replica of a service.
"""
