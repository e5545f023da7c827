// Compile-time stand-in for the Android SDK's class (see ../os/Handler.java); never run.
package android.net;

import android.os.Handler;

public class ConnectivityManager {
  public static class NetworkCallback {
    public void onAvailable(Network network) {}
    public void onLost(Network network) {}
    public void onCapabilitiesChanged(Network network, NetworkCapabilities caps) {}
  }
  public void registerDefaultNetworkCallback(NetworkCallback callback, Handler handler) {}
}
