"""truc-gateway: the REST/JSON and Server-Sent Events face of the truc.v1 API.

One generic transcoder, driven by the ``google.api.http`` options of the proto
descriptors (:mod:`truc_gateway.routes`), turns HTTP requests into gRPC calls to
the game service and the lobby and their answers into proto3 JSON
(:mod:`truc_gateway.transcode`); server-streaming RPCs become Server-Sent Events
(:mod:`truc_gateway.sse`); errors keep their google.rpc.Status and ErrorInfo
(:mod:`truc_gateway.errors`). The same route table generates the OpenAPI
document (:mod:`truc_gateway.openapi`). It never imports the services: it only
knows the protocol (``truc.v1``).
"""
