# Tests of the TCP transport (real loopback sockets, POSIX only), the Status -> Failure
# bridge, and the ScriptedTransport fake in tests/support.
stepback_add_test(tcp_failure_test tcp_failure_test.cpp)
stepback_add_test(tcp_scripted_transport_test tcp_scripted_transport_test.cpp)
if(CMAKE_SYSTEM_NAME MATCHES "^(Linux|Android|Darwin|iOS)$")
  stepback_add_test(tcp_transport_test tcp_transport_test.cpp)
  # dlsym(RTLD_NEXT) for the getaddrinfo() interposer.
  target_link_libraries(tcp_transport_test PRIVATE ${CMAKE_DL_LIBS})
endif()
stepback_add_test(socket_length_test socket_length_test.cpp)
