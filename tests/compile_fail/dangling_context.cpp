// A RetryMachine or Client built from a temporary RetryContext would keep its address after
// the temporary is gone; the deleted rvalue constructors make that a compile error.
// STEPBACK_DANGLING selects the case; without it, the same objects are built from lvalues.
#include "stepback/core/random.hpp"
#include "stepback/core/retry_machine.hpp"
#include "stepback/https/client.hpp"

int main() {
  stepback::Policy policy;
  stepback::Xoshiro128 random(1);
#if defined(STEPBACK_DANGLING_MACHINE)
  stepback::RetryMachine machine(stepback::RetryContext{policy, random, nullptr});
  (void)machine;
#elif defined(STEPBACK_DANGLING_CLIENT)
  extern stepback::https::Connector& some_connector();
  stepback::https::Client client(some_connector(), stepback::RetryContext{policy, random, nullptr},
                                 stepback::https::ClientOptions{});
#else
  const stepback::RetryContext context{policy, random, nullptr};
  stepback::RetryMachine machine(context);
  return machine.step(stepback::Millis(0)).kind == stepback::Next::Kind::kSend ? 0 : 1;
#endif
  return 0;
}
