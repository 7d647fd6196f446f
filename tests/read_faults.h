/* read_faults.h - whether reading an address faults, asked of a child
 * process (the emulations' device memory is out of the host code's reach:
 * tests/test_emu_memory.c, tests/test_cuda_adagrad.c). */
#ifndef MT_READ_FAULTS_H
#define MT_READ_FAULTS_H
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static inline void mt_read_faults_segv(int sig) {
  (void)sig;
  _exit(3);
}
/* 1 when a child that reads p faults (its handler's exit 3; a sanitizer's
 * own handler may get there first: any end but a read's 0 or 2) */
static inline int mt_read_faults(const volatile char *p) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    signal(SIGSEGV, mt_read_faults_segv);
    char c = p[0];
    _exit(c == 0x7f ? 2 : 0);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid) return 0;
  return !(WIFEXITED(status) && (WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == 2));
}

#endif /* MT_READ_FAULTS_H */
