# CaresResolver against dns_server.py (UDP and TCP on 127.0.0.1), alone and under the Client;
# the heap trap over a lookup plus a request has its own binary (the trap replaces malloc).
if(STEPBACK_HAVE_CARES)
  integration_add_test(integration_resolver_test resolver_test.cpp)
  # dlsym(RTLD_NEXT) for the getaddrinfo() interposer.
  target_link_libraries(integration_resolver_test PRIVATE ${CMAKE_DL_LIBS})
  integration_add_test(integration_resolver_heap_test resolver_heap_test.cpp
                       ${PROJECT_SOURCE_DIR}/tests/support/heap_trap.cpp)
  set_target_properties(integration_resolver_heap_test PROPERTIES ENABLE_EXPORTS ON)
  target_link_libraries(integration_resolver_heap_test PRIVATE ${CMAKE_DL_LIBS})
  # A 64 KiB pool for the whole process: every lookup runs out of memory.
  integration_add_test(integration_resolver_pool_test resolver_pool_test.cpp)
endif()

# Happy Eyeballs inside a network namespace the test makes (unshare, nft black holes): as
# root with nft and ip; each test skips with a message elsewhere. Its own binary, since every
# test moves its process into a new namespace.
if(STEPBACK_HAVE_CARES)
  integration_add_test(integration_happy_eyeballs_test happy_eyeballs_test.cpp)
endif()
