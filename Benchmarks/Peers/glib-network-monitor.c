/* GLib's GNetworkMonitor, the peer of `backgrounder status --watch` in the reaction benchmark.
 *
 * Prints one line when it is ready ("ready TYPE available=0|1") and one line on every
 * "network-changed" signal ("changed available=0|1"), flushed at once; the driver stamps each line
 * the moment it arrives, as it does for the other tools.
 *
 * Build: cc -O2 -o glib-network-monitor glib-network-monitor.c $(pkg-config --cflags --libs gio-2.0)
 */
#include <gio/gio.h>
#include <stdio.h>

static void network_changed(GNetworkMonitor *monitor, gboolean available, gpointer data) {
  (void)monitor;
  (void)data;
  printf("changed available=%d\n", available ? 1 : 0);
  fflush(stdout);
}

int main(void) {
  GNetworkMonitor *monitor = g_network_monitor_get_default();
  printf("ready %s available=%d\n", G_OBJECT_TYPE_NAME(monitor),
         g_network_monitor_get_network_available(monitor) ? 1 : 0);
  fflush(stdout);
  g_signal_connect(monitor, "network-changed", G_CALLBACK(network_changed), NULL);
  GMainLoop *loop = g_main_loop_new(NULL, FALSE);
  g_main_loop_run(loop);
  return 0;
}
