// The allocation-free HTTP/1.1 message layer: request writer, URL parser, response
// parser and Retry-After / HTTP-date interpretation.
#ifndef STEPBACK_HTTPS_HTTP1_HPP_
#define STEPBACK_HTTPS_HTTP1_HPP_

#include "stepback/https/http_date.hpp"        // IWYU pragma: export
#include "stepback/https/request_writer.hpp"   // IWYU pragma: export
#include "stepback/https/response_parser.hpp"  // IWYU pragma: export

#endif  // STEPBACK_HTTPS_HTTP1_HPP_
