# The mbedTLS build with our configuration, end to end: an in-process TLS 1.3 and 1.2
# handshake on the static arena.
stepback_add_test(tls_smoke_test tls_smoke_test.cpp)

# The heap-free gmtime mbedTLS checks certificate dates with, against glibc's.
stepback_add_test(mbedtls_time_test mbedtls_time_test.cpp)
