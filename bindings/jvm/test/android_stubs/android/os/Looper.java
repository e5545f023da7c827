// Compile-time stand-in for the Android SDK's class (see Handler.java); never run.
package android.os;

public final class Looper {
  public static Looper getMainLooper() { throw new UnsupportedOperationException(); }
}
