# The HTTP/1.1 message layer: request writer, URL parser, response parser, HTTP-date.
set(STEPBACK_HTTP1_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/src/http_date.cpp
  ${CMAKE_CURRENT_LIST_DIR}/src/request_writer.cpp
  ${CMAKE_CURRENT_LIST_DIR}/src/response_parser.cpp)
list(APPEND STEPBACK_HTTPS_SOURCES ${STEPBACK_HTTP1_SOURCES})
# Like core: these throw nothing and need no RTTI, and the flags make sure of it.
if(NOT MSVC)
  set_source_files_properties(${STEPBACK_HTTP1_SOURCES} PROPERTIES COMPILE_OPTIONS "-fno-exceptions;-fno-rtti")
endif()
