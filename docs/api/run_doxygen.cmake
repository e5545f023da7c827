# cmake -DDOXYGEN=<doxygen> -DDOXYFILE=<Doxyfile> [-DEXPECT=<regex>] -P run_doxygen.cmake
#
# Runs Doxygen on a Doxyfile. Without EXPECT, fails on a non-zero exit or on any output:
# the Doxyfile is QUIET, so whatever Doxygen prints is a warning or an error. With EXPECT,
# the run must fail, print a warning matching the regex, and no other warning (the test of
# the gate itself).
execute_process(COMMAND "${DOXYGEN}" "${DOXYFILE}" RESULT_VARIABLE rc
                OUTPUT_VARIABLE out ERROR_VARIABLE out)
string(STRIP "${out}" out)
if(DEFINED EXPECT AND NOT EXPECT STREQUAL "")
  if(rc EQUAL 0)
    message(FATAL_ERROR "doxygen passed a Doxyfile that should fail (${DOXYFILE}):\n${out}")
  endif()
  if(NOT out MATCHES "${EXPECT}")
    message(FATAL_ERROR "doxygen failed (${rc}) without a warning matching '${EXPECT}':\n${out}")
  endif()
  string(REGEX MATCHALL "[^\n]*: (warning|error): [^\n]*" warnings "${out}")
  foreach(warning IN LISTS warnings)
    if(NOT warning MATCHES "${EXPECT}")
      message(FATAL_ERROR "doxygen warned of more than '${EXPECT}':\n${warning}")
    endif()
  endforeach()
  message(STATUS "doxygen failed as expected:\n${out}")
elseif(NOT rc EQUAL 0 OR NOT out STREQUAL "")
  message(FATAL_ERROR "doxygen (exit ${rc}) on ${DOXYFILE}:\n${out}")
endif()
