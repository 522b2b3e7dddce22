"""truc-protocol: the ``truc.v1`` protocol for Python, shared by servers and clients.

* ``truc.v1``: the generated messages and gRPC stubs (``make proto`` writes them,
  never edited by hand), with their type stubs.
* :mod:`truc_protocol.convert`: proto <-> rules conversion (cards, actions,
  options, events, views); a malformed message raises
  ``InvalidArgument`` naming the field.
* :mod:`truc_protocol.errors` (the transport-neutral errors every service
  answers with) and :mod:`truc_protocol.status` (reading them off a failed call);
* :mod:`truc_protocol.tokens`: the bearer tokens (claims, HS256 signing) and the
  public development key;
* :mod:`truc_protocol.balancing`: the channel and server options that spread
  calls over every replica of a service.
"""
