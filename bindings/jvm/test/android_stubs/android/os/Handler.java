// Compile-time stand-in for the Android SDK's class (only the members the Kotlin files of
// examples/android/kotlin/ use), so that jvm.transfers can compile them; never run.
package android.os;

public class Handler {
  public Handler(Looper looper) {}
  public final boolean post(Runnable r) { throw new UnsupportedOperationException(); }
  public final boolean postDelayed(Runnable r, long delayMillis) { throw new UnsupportedOperationException(); }
  public final void removeCallbacks(Runnable r) {}
}
