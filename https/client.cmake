# The TLS transport, the trust store (anchors looked up on demand through mbedTLS's CA
# callback, public-key pins), the built-in connector and the retrying client.
list(APPEND STEPBACK_HTTPS_SOURCES src/tls.cpp src/trust_store.cpp src/tcp_tls_connector.cpp
     src/client.cpp)
# Integrity of downloaded bodies: CRC-32C (hardware paths chosen at run time) and MD5 (mbedTLS)
# against x-goog-hash and Content-MD5.
list(APPEND STEPBACK_HTTPS_SOURCES src/integrity.cpp)
