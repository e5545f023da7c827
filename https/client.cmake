# The TLS transport, the built-in connector and the retrying client.
list(APPEND STEPBACK_HTTPS_SOURCES src/tls.cpp src/tcp_tls_connector.cpp src/client.cpp)
