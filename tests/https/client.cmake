# The Client's state transitions against scripted connections (tests/https/client_test.cpp).
stepback_add_test(client_test ${CMAKE_CURRENT_LIST_DIR}/client_test.cpp)
