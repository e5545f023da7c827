// `stepback-get`: `stepback get` alone, for footprint-sensitive builds (no demo server,
// no simulator); the same options and exit codes.
#include "get.hpp"

int main(int argc, char** argv) { return stepback::tools::run_get(argc, argv); }
