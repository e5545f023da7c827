/* nfq_delay: holds every packet of one NFQUEUE queue for a fixed one-way delay, then accepts
 * it (NF_ACCEPT), in arrival order. The latency half of the test bench
 * (bench/netbench/netbench.sh); this kernel has no netem.
 *
 * How: the packets' ids go into a FIFO with their release time (arrival + delay). The loop
 * waits in ppoll() on the queue's netlink socket with a timeout to the head's release time,
 * so a packet is accepted within a few tens of microseconds of when it is due. The delay is
 * the same for every packet, so release times are non-decreasing and order is kept. The FIFO
 * is bounded (--max-packets); a packet that finds it full is dropped (NF_DROP), as a full
 * router queue would, and the kernel's own queue is given the same bound. Only the packet
 * metadata is copied to user space (NFQNL_COPY_META): the payload never leaves the kernel.
 *
 * It stops by itself: after --lifetime seconds, or on SIGTERM/SIGINT/SIGHUP. Packets still
 * held then are accepted at once (so nothing in flight is lost when the bench is reconfigured);
 * while no process is bound to the queue, the kernel drops what the NFQUEUE rule sends it.
 * At exit it prints one line of counters to stderr.
 *
 * Usage: nfq_delay --queue N --delay-ms MS [--lifetime S] [--max-packets N]
 *                  [--ready-file PATH] [--quiet]
 *   --queue N        NFQUEUE queue number (0..65535), as in `-j NFQUEUE --queue-num N`
 *   --delay-ms MS    one-way delay in milliseconds, may be fractional (0..60000)
 *   --lifetime S     exit after S seconds (default 3600, at most 86400)
 *   --max-packets N  bound of the FIFO and of the kernel queue (default 20000)
 *   --ready-file P   created once the queue is bound (the caller waits for it before it
 *                    installs the NFQUEUE rule)
 * Must run as root (CAP_NET_ADMIN) in the network namespace whose rule feeds the queue.
 *
 * Build (Debian: libnetfilter-queue-dev):
 *   cc -O2 -Wall -Wextra -o nfq_delay nfq_delay.c \
 *     $(pkg-config --cflags --libs libnetfilter_queue)
 * or, without pkg-config, ... -lnetfilter_queue -lnfnetlink
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <linux/netfilter.h> /* NF_ACCEPT, NF_DROP */
#include <linux/netlink.h>   /* NETLINK_NO_ENOBUFS */
#include <libnetfilter_queue/libnetfilter_queue.h>

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

struct held {
  uint32_t id;
  int64_t release_ns;
};

struct state {
  struct nfq_q_handle* qh;
  struct held* fifo;
  size_t cap, head, count;
  int64_t delay_ns;
  unsigned long long received, accepted, dropped_full, verdict_errors;
  int64_t late_max_ns, late_sum_ns; /* how long after its release time a packet went out */
};

static volatile sig_atomic_t g_stop = 0;

static void on_signal(int sig) {
  (void)sig;
  g_stop = 1;
}

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void verdict(struct state* st, uint32_t id, unsigned int v) {
  if (nfq_set_verdict(st->qh, id, v, 0, NULL) < 0) st->verdict_errors++;
}

static int on_packet(struct nfq_q_handle* qh, struct nfgenmsg* msg, struct nfq_data* nfa,
                     void* data) {
  (void)qh;
  (void)msg;
  struct state* st = data;
  struct nfqnl_msg_packet_hdr* ph = nfq_get_msg_packet_hdr(nfa);
  if (ph == NULL) return 0;
  uint32_t id = ntohl(ph->packet_id);
  st->received++;
  if (st->count == st->cap) {
    st->dropped_full++;
    verdict(st, id, NF_DROP);
    return 0;
  }
  if (st->delay_ns == 0) {
    st->accepted++;
    verdict(st, id, NF_ACCEPT);
    return 0;
  }
  size_t tail = (st->head + st->count) % st->cap;
  st->fifo[tail].id = id;
  st->fifo[tail].release_ns = now_ns() + st->delay_ns;
  st->count++;
  return 0;
}

/* Accepts every held packet whose time has come (all of them when flush is set). */
static void release_due(struct state* st, int flush) {
  int64_t now = now_ns();
  while (st->count > 0 && (flush || st->fifo[st->head].release_ns <= now)) {
    int64_t late = now - st->fifo[st->head].release_ns;
    if (late > 0 && !flush) {
      st->late_sum_ns += late;
      if (late > st->late_max_ns) st->late_max_ns = late;
    }
    verdict(st, st->fifo[st->head].id, NF_ACCEPT);
    st->accepted++;
    st->head = (st->head + 1) % st->cap;
    st->count--;
  }
}

static void usage(void) {
  fprintf(stderr,
          "usage: nfq_delay --queue N --delay-ms MS [--lifetime S] [--max-packets N]"
          " [--ready-file PATH] [--quiet]\n");
}

static int parse_long(const char* s, long lo, long hi, long* out) {
  char* end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi) return -1;
  *out = v;
  return 0;
}

int main(int argc, char** argv) {
  long queue = -1, lifetime_s = 3600, max_packets = 20000;
  double delay_ms = -1;
  const char* ready_file = NULL;
  int quiet = 0;

  for (int i = 1; i < argc; i++) {
    const char* a = argv[i];
    const char* v = (i + 1 < argc) ? argv[i + 1] : NULL;
    if (strcmp(a, "--quiet") == 0) {
      quiet = 1;
      continue;
    }
    if (v == NULL) {
      usage();
      return 2;
    }
    if (strcmp(a, "--queue") == 0) {
      if (parse_long(v, 0, 65535, &queue) != 0) goto bad;
    } else if (strcmp(a, "--delay-ms") == 0) {
      char* end;
      delay_ms = strtod(v, &end);
      if (end == v || *end != '\0' || !(delay_ms >= 0 && delay_ms <= 60000)) goto bad;
    } else if (strcmp(a, "--lifetime") == 0) {
      if (parse_long(v, 1, 86400, &lifetime_s) != 0) goto bad;
    } else if (strcmp(a, "--max-packets") == 0) {
      if (parse_long(v, 1, 1000000, &max_packets) != 0) goto bad;
    } else if (strcmp(a, "--ready-file") == 0) {
      ready_file = v;
    } else {
      goto bad;
    }
    i++;
    continue;
  bad:
    fprintf(stderr, "nfq_delay: bad argument %s %s\n", a, v);
    usage();
    return 2;
  }
  if (queue < 0 || delay_ms < 0) {
    usage();
    return 2;
  }

  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);
  /* Signals are taken only inside ppoll(), so a flag set elsewhere is never missed. */
  sigset_t blocked, wait_mask;
  sigemptyset(&blocked);
  sigaddset(&blocked, SIGTERM);
  sigaddset(&blocked, SIGINT);
  sigaddset(&blocked, SIGHUP);
  sigprocmask(SIG_BLOCK, &blocked, &wait_mask);
  sigdelset(&wait_mask, SIGTERM);
  sigdelset(&wait_mask, SIGINT);
  sigdelset(&wait_mask, SIGHUP);

  /* Wake-ups are the bench's timing: ask for 1 us timer slack instead of the default 50 us. */
  prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);

  struct state st;
  memset(&st, 0, sizeof st);
  st.cap = (size_t)max_packets;
  st.delay_ns = (int64_t)(delay_ms * 1e6 + 0.5);
  st.fifo = calloc(st.cap, sizeof *st.fifo);
  if (st.fifo == NULL) {
    fprintf(stderr, "nfq_delay: out of memory\n");
    return 1;
  }

  struct nfq_handle* h = nfq_open();
  if (h == NULL) {
    fprintf(stderr, "nfq_delay: nfq_open: %s (root? nfnetlink_queue?)\n", strerror(errno));
    return 1;
  }
  /* Needed on kernels before 3.8 only; harmless (and may fail) after. */
  nfq_unbind_pf(h, AF_INET);
  nfq_bind_pf(h, AF_INET);
  nfq_unbind_pf(h, AF_INET6);
  nfq_bind_pf(h, AF_INET6);
  st.qh = nfq_create_queue(h, (uint16_t)queue, on_packet, &st);
  if (st.qh == NULL) {
    fprintf(stderr, "nfq_delay: cannot bind queue %ld: %s (already bound?)\n", queue,
            strerror(errno));
    nfq_close(h);
    return 1;
  }
  if (nfq_set_mode(st.qh, NFQNL_COPY_META, 0) < 0) {
    fprintf(stderr, "nfq_delay: nfq_set_mode: %s\n", strerror(errno));
    nfq_destroy_queue(st.qh);
    nfq_close(h);
    return 1;
  }
  if (nfq_set_queue_maxlen(st.qh, (uint32_t)max_packets) < 0 && !quiet)
    fprintf(stderr, "nfq_delay: nfq_set_queue_maxlen failed (kernel default kept)\n");

  int fd = nfq_fd(h);
  /* A burst larger than the socket buffer must not end the program: make the buffer large
   * and ask the kernel not to report ENOBUFS (it then drops the excess, counted as loss). */
  int rcvbuf = 8 * 1024 * 1024;
  if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof rcvbuf) < 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
  int one = 1;
  setsockopt(fd, SOL_NETLINK, NETLINK_NO_ENOBUFS, &one, sizeof one);
  int fl = fcntl(fd, F_GETFL);
  if (fl >= 0) fcntl(fd, F_SETFL, fl | O_NONBLOCK);

  if (ready_file != NULL) {
    FILE* f = fopen(ready_file, "w");
    if (f == NULL) {
      fprintf(stderr, "nfq_delay: cannot create %s: %s\n", ready_file, strerror(errno));
      nfq_destroy_queue(st.qh);
      nfq_close(h);
      return 1;
    }
    fprintf(f, "%ld\n", (long)getpid());
    fclose(f);
  }
  if (!quiet)
    fprintf(stderr, "nfq_delay: queue %ld, delay %.3f ms, lifetime %ld s, bound %ld\n", queue,
            delay_ms, lifetime_s, max_packets);

  const int64_t end_ns = now_ns() + (int64_t)lifetime_s * 1000000000LL;
  static char buf[65536] __attribute__((aligned));
  int rc = 0;
  while (!g_stop) {
    release_due(&st, 0);
    int64_t now = now_ns();
    if (now >= end_ns) break;
    int64_t wake = end_ns;
    if (st.count > 0 && st.fifo[st.head].release_ns < wake) wake = st.fifo[st.head].release_ns;
    int64_t wait = wake > now ? wake - now : 0; /* the head may have come due meanwhile */
    struct timespec ts = {(time_t)(wait / 1000000000LL), (long)(wait % 1000000000LL)};
    struct pollfd pfd = {fd, POLLIN, 0};
    int pr = ppoll(&pfd, 1, &ts, &wait_mask);
    if (pr < 0) {
      if (errno == EINTR) continue;
      fprintf(stderr, "nfq_delay: ppoll: %s\n", strerror(errno));
      rc = 1;
      break;
    }
    if (pr == 0) continue;
    /* Drain what is there, bounded so that due releases are not starved. */
    for (int n = 0; n < 256; n++) {
      ssize_t r = recv(fd, buf, sizeof buf, 0);
      if (r < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS) break;
        fprintf(stderr, "nfq_delay: recv: %s\n", strerror(errno));
        rc = 1;
        g_stop = 1;
        break;
      }
      if (r == 0) break;
      nfq_handle_packet(h, buf, (int)r);
      if ((n & 15) == 15) release_due(&st, 0);
    }
  }
  release_due(&st, 1);
  if (!quiet)
    fprintf(stderr,
            "nfq_delay: queue %ld done: received %llu, accepted %llu, dropped (queue full) %llu,"
            " verdict errors %llu; late by mean %.1f us, max %.1f us\n",
            queue, st.received, st.accepted, st.dropped_full, st.verdict_errors,
            st.accepted ? (double)st.late_sum_ns / 1e3 / (double)st.accepted : 0.0,
            (double)st.late_max_ns / 1e3);
  nfq_destroy_queue(st.qh);
  nfq_close(h);
  free(st.fifo);
  return rc;
}
