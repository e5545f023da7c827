# The TLS transport and the retrying client.
list(APPEND STEPBACK_HTTPS_SOURCES src/tls.cpp src/connector.cpp src/client.cpp)
function(stepback_https_client_link target)
  target_link_libraries(${target} PUBLIC stepback::profiles)
endfunction()
