"""gRPC adapters: proto <-> domain conversion, errors, the servicer."""
