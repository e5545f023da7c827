// The fixture of docs.api_reference_gate (docs/api/CMakeLists.txt): one broken Doxygen
// comment, so the gate that runs Doxygen on the public headers is seen to fail. The plain
// comments around it read as the headers' do (scripts/doxygen_filter.py) and must warn
// nothing, markup characters and all.
#ifndef STEPBACK_TESTS_DOCS_API_REFERENCE_GATE_HPP_
#define STEPBACK_TESTS_DOCS_API_REFERENCE_GATE_HPP_

namespace stepback_gate {

// A plain comment with what Doxygen would read as markup: \n, @param, <b>, 50% & #1.
struct Plain {
  int value = 0;  // Bytes; <none> is 0.
};

/// The broken one: it documents a parameter the function does not have.
/// \param value A parameter it has.
/// \param no_such_parameter Nothing.
int broken(int value);

}  // namespace stepback_gate

#endif  // STEPBACK_TESTS_DOCS_API_REFERENCE_GATE_HPP_
