# The non-blocking TCP transport (POSIX only so far; Windows needs a winsock variant) and
# the Status -> Failure bridge.
list(APPEND STEPBACK_HTTPS_SOURCES src/failure.cpp)
if(CMAKE_SYSTEM_NAME MATCHES "^(Linux|Android|Darwin|iOS)$")
  list(APPEND STEPBACK_HTTPS_SOURCES src/tcp_transport_posix.cpp)
endif()
