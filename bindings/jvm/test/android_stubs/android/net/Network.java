// Compile-time stand-in for the Android SDK's class (see ../os/Handler.java); never run.
package android.net;

public class Network {}
