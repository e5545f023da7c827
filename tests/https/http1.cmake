# Tests of the HTTP/1.1 message layer, and the corpus replays of its fuzz targets (response
# parser, HTTP-date and Retry-After, URL).
stepback_add_test(http1_request_writer_test ${CMAKE_CURRENT_LIST_DIR}/http1_request_writer_test.cpp)
stepback_add_test(http1_response_parser_test ${CMAKE_CURRENT_LIST_DIR}/http1_response_parser_test.cpp)
stepback_add_test(http1_http_date_test ${CMAKE_CURRENT_LIST_DIR}/http1_http_date_test.cpp)
include(${CMAKE_CURRENT_LIST_DIR}/../fuzz/http1.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/../fuzz/retry_after.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/../fuzz/url.cmake)
