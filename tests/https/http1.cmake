# Tests of the HTTP/1.1 message layer, and its fuzz target's corpus replay.
stepback_add_test(http1_request_writer_test ${CMAKE_CURRENT_LIST_DIR}/http1_request_writer_test.cpp)
stepback_add_test(http1_response_parser_test ${CMAKE_CURRENT_LIST_DIR}/http1_response_parser_test.cpp)
stepback_add_test(http1_http_date_test ${CMAKE_CURRENT_LIST_DIR}/http1_http_date_test.cpp)
include(${CMAKE_CURRENT_LIST_DIR}/../fuzz/http1.cmake)
