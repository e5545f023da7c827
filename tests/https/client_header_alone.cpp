// Compiled with only core/include and https/include on the include path (no Mbed TLS, c-ares
// or nanopb): an app with a transport of its own includes client.hpp without them. The build
// fails if a header under it starts to need one.
#include "stepback/https/client.hpp"

namespace stepback::https {
// Used, so the whole class is checked, not only declared.
std::size_t client_size_for_header_check() { return sizeof(Client); }
}  // namespace stepback::https
