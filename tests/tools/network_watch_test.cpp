// NetworkWatch::read_routes over the text of /proc/net/route and /proc/net/ipv6_route: what
// counts as a network and what as a change of it.
#include "network_watch.hpp"

#include <gtest/gtest.h>

namespace stepback::tools {
namespace {

constexpr char kV4Header[] =
    "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n";

std::string v4(const char* rows) { return std::string(kV4Header) + rows; }

// A default route over eth0, and its connected subnet.
constexpr char kWifi[] =
    "eth0\t00000000\t0101A8C0\t0003\t0\t0\t0\t00000000\t0\t0\t0\n"
    "eth0\t0001A8C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n";
// The same default over another interface (cellular).
constexpr char kCellular[] =
    "wwan0\t00000000\t01000A0A\t0003\t0\t0\t0\t00000000\t0\t0\t0\n"
    "wwan0\t00000A0A\t00000000\t0001\t0\t0\t0\t0000FFFF\t0\t0\t0\n";
// Only a connected subnet: a closed network, or a test's namespaces.
constexpr char kSubnetOnly[] = "veth0\t00004D0A\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n";
// What every interface that is up has, and the kernel's unreachable default on lo.
constexpr char kV6LinkLocalOnly[] =
    "fe800000000000000000000000000000 40 00000000000000000000000000000000 00 "
    "00000000000000000000000000000000 00000100 00000001 00000000 00000001     eth0\n"
    "ff000000000000000000000000000000 08 00000000000000000000000000000000 00 "
    "00000000000000000000000000000000 00000100 00000002 00000000 00000001     eth0\n"
    "00000000000000000000000000000000 00 00000000000000000000000000000000 00 "
    "00000000000000000000000000000000 ffffffff 00000001 00000000 00200200       lo\n";
constexpr char kV6Default[] =
    "00000000000000000000000000000000 00 00000000000000000000000000000000 00 "
    "fe800000000000000000000000000001 00000400 00000001 00000000 00000003     eth0\n";

TEST(NetworkWatchRoutes, ADefaultRouteIsANetworkAndItsInterfaceAndGatewayAreWhichOne) {
  const NetworkWatch::Routes wifi = NetworkWatch::read_routes(v4(kWifi).c_str(), "");
  const NetworkWatch::Routes cellular = NetworkWatch::read_routes(v4(kCellular).c_str(), "");
  EXPECT_TRUE(wifi.any);
  EXPECT_NE(wifi.defaults, 0U);
  EXPECT_NE(wifi.defaults, cellular.defaults) << "a switch from Wi-Fi to cellular is a change";
  EXPECT_TRUE(NetworkWatch::read_routes(v4(kWifi).c_str(), "") == wifi);
  const NetworkWatch::Routes v6 = NetworkWatch::read_routes(v4("").c_str(), kV6Default);
  EXPECT_TRUE(v6.any);
  EXPECT_NE(v6.defaults, 0U);
}

// Regression: with only the default routes counted, a device whose servers sit on a connected
// subnet (the latency bench's namespaces) was taken for offline, and every `stepback get` there
// waited out the offline limit (netbench.roundtrips stopped moving).
TEST(NetworkWatchRoutes, ARouteWithoutADefaultIsStillANetwork) {
  const NetworkWatch::Routes r = NetworkWatch::read_routes(v4(kSubnetOnly).c_str(), "");
  EXPECT_TRUE(r.any);
  EXPECT_EQ(r.defaults, 0U);
}

TEST(NetworkWatchRoutes, LinkLocalMulticastAndUnreachableRoutesAreNoNetwork) {
  const NetworkWatch::Routes r = NetworkWatch::read_routes(v4("").c_str(), kV6LinkLocalOnly);
  EXPECT_FALSE(r.any);
  EXPECT_EQ(r.defaults, 0U);
  EXPECT_FALSE(NetworkWatch::read_routes("", "").any);
  // A route on lo leaves nothing either.
  EXPECT_FALSE(NetworkWatch::read_routes(
                   v4("lo\t0000007F\t00000000\t0001\t0\t0\t0\t000000FF\t0\t0\t0\n").c_str(), "")
                   .any);
}

// Bound to one device (--interface), only its routes are the network: Wi-Fi's default route
// going away does not touch a transfer bound to cellular, and the bound device's does.
TEST(NetworkWatchRoutes, ABoundDeviceCountsOnlyItsOwnRoutes) {
  const std::string both = v4((std::string(kWifi) + kCellular).c_str());
  const NetworkWatch::Routes bound = NetworkWatch::read_routes(both.c_str(), kV6Default, "wwan0");
  EXPECT_TRUE(bound.any);
  EXPECT_NE(bound.defaults, 0U);
  EXPECT_TRUE(NetworkWatch::read_routes(v4(kCellular).c_str(), "", "wwan0") == bound)
      << "Wi-Fi's routes (v4 and v6) going away is no change for a transfer bound to wwan0";
  const NetworkWatch::Routes gone =
      NetworkWatch::read_routes(v4(kWifi).c_str(), kV6Default, "wwan0");
  EXPECT_FALSE(gone.any);
  EXPECT_EQ(gone.defaults, 0U);
  EXPECT_FALSE(NetworkWatch::read_routes(v4(kWifi).c_str(), "", "wwan").any)
      << "a prefix of a device's name is another device";
}

}  // namespace
}  // namespace stepback::tools
