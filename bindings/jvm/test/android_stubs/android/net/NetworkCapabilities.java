// Compile-time stand-in for the Android SDK's class (see ../os/Handler.java); never run.
package android.net;

public final class NetworkCapabilities {
  public static final int NET_CAPABILITY_NOT_METERED = 11;
  public static final int NET_CAPABILITY_NOT_ROAMING = 18;
  public boolean hasCapability(int capability) { throw new UnsupportedOperationException(); }
}
