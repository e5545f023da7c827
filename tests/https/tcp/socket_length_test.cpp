// Regression test: socklen_t is signed on 32-bit bionic. The helpers the TCP
// transport uses for it compile (under the project's -Werror warnings) and behave the same
// with a signed and an unsigned length type.
#include "https/src/tcp/socket_length.hpp"

#include <cstdint>

#include <gtest/gtest.h>

namespace stepback::https {
namespace {

using detail::checked_socket_length;
using detail::to_socket_length;

template <typename Len>
class SocketLengthTest : public ::testing::Test {};

// glibc and 64-bit bionic (unsigned), 32-bit bionic (int).
using LengthTypes = ::testing::Types<std::uint32_t, std::int32_t>;
TYPED_TEST_SUITE(SocketLengthTest, LengthTypes, );  // Empty name generator: clang -Wpedantic.

TYPED_TEST(SocketLengthTest, AcceptsLengthsUpToTheCapacity) {
  EXPECT_EQ(checked_socket_length(TypeParam{16}, 128), std::optional<std::uint32_t>(16));
  EXPECT_EQ(checked_socket_length(TypeParam{128}, 128), std::optional<std::uint32_t>(128));
  EXPECT_EQ(checked_socket_length(TypeParam{0}, 128), std::optional<std::uint32_t>(0));
}

TYPED_TEST(SocketLengthTest, RefusesLengthsAboveTheCapacity) {
  EXPECT_EQ(checked_socket_length(TypeParam{129}, 128), std::nullopt);
  EXPECT_EQ(checked_socket_length(TypeParam{2147483647}, 128), std::nullopt);
}

TYPED_TEST(SocketLengthTest, ConvertsSizesToTheLengthType) {
  constexpr TypeParam n = to_socket_length<TypeParam>(sizeof(int));
  EXPECT_EQ(n, TypeParam{4});
}

TEST(SocketLengthSigned, RefusesNegativeLengths) {
  EXPECT_EQ(checked_socket_length(std::int32_t{-1}, 128), std::nullopt);
  EXPECT_EQ(checked_socket_length(std::int32_t{-2147483647 - 1}, 128), std::nullopt);
}

}  // namespace
}  // namespace stepback::https
