"""truc-service: the kit every truc service is built with.

* :mod:`.settings`: settings from the environment (``pydantic-settings``), one
  ``ConfigError``, one dev-mode switch, the JWT key rules;
* :mod:`.errors`: the one table from :class:`truc_protocol.errors.ServiceError`
  (and anything else) to a gRPC status with a ``google.rpc.ErrorInfo``;
* :mod:`.guard`: lenient request parsing, bearer-token reading, the wrapper
  around every servicer method;
* :mod:`.tokens`: JWT verification (and issuing, for the lobby and tests);
* :mod:`.process`: start, serve, two-stage shutdown;
* :mod:`.probe`: the gRPC health probe of the container images.
"""
