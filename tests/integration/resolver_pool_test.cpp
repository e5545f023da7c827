// An exhausted DNS pool is a resolver failure with words, never a crash: this binary installs
// a 64 KiB pool (c-ares needs 128 KiB to read an answer), so every lookup runs out.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "integration_support.hpp"
#include "resolver_support.hpp"
#include "stepback/https/dns/cares_resolver.hpp"

namespace stepback::integration {
namespace {

alignas(16) std::uint8_t small_pool[64 * 1024];

TEST(ResolverPool, AnExhaustedPoolIsAResolverFailure) {
  STEPBACK_REQUIRE_TOOL(python_path(), "python3");
  ASSERT_EQ(https::dns_pool_init(https::MutableBytes{small_pool, sizeof small_pool}),
            https::Status::kOk);
  DnsServer dns;
  ASSERT_TRUE(dns.start());
  https::CaresResolver resolver;
  ASSERT_EQ(resolver.init(test_resolver_options(dns.servers())), https::Status::kOk)
      << resolver.message();
  for (int i = 0; i < 3; ++i) {
    const ResolveRun run = resolve(resolver, "ok.test", 443);
    EXPECT_EQ(run.error, https::ResolveError::kOutOfMemory) << run.message;
    EXPECT_FALSE(https::is_definite(run.error));
    EXPECT_NE(run.message.find("ok.test"), std::string::npos) << run.message;
    EXPECT_NE(run.message.find("memory pool"), std::string::npos) << run.message;
    EXPECT_LT(run.elapsed, Millis(1000));
  }
  EXPECT_GT(https::dns_pool_stats().refused, 0U);
  // The pool is intact: a channel can still be made and destroyed.
  https::CaresResolver another;
  EXPECT_EQ(another.init(test_resolver_options(dns.servers())), https::Status::kOk)
      << another.message();
}

TEST(ResolverPool, ATooSmallOrMisalignedBufferIsRejected) {
  alignas(16) static std::uint8_t tiny[1024];
  EXPECT_EQ(https::dns_pool_init(https::MutableBytes{tiny, sizeof tiny}),
            https::Status::kInvalidArgument);
  EXPECT_EQ(https::dns_pool_init(https::MutableBytes{small_pool + 1, 8192}),
            https::Status::kInvalidArgument);
}

}  // namespace
}  // namespace stepback::integration
