# The mbedTLS build with our configuration, end to end: an in-process TLS 1.3 and 1.2
# handshake on the static arena.
stepback_add_test(tls_smoke_test tls_smoke_test.cpp)
