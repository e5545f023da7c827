// Uses the active profile; built with different profile definitions by the tests.
#include "stepback/profiles/active.hpp"

int main() { return stepback::profiles::active.retry.max_retries > 0 ? 0 : 1; }
