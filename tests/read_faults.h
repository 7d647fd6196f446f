/* read_faults.h - whether something faults, asked of a child process (the
 * emulations' device memory is out of the host code's reach, and a guard
 * page ends each allocation of the benchmarks' emulation:
 * tests/test_emu_memory.c, tests/test_cuda_adagrad.c). */
#ifndef MT_READ_FAULTS_H
#define MT_READ_FAULTS_H
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static inline void mt_child_faults_segv(int sig) {
  (void)sig;
  _exit(3);
}
/* 1 when a child running fn(arg) faults (its handler's exit 3; a
 * sanitizer's own handler may get there first: any end but fn's return,
 * exit 0) */
static inline int mt_child_faults(void (*fn)(void *), void *arg) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    signal(SIGSEGV, mt_child_faults_segv);
    fn(arg);
    _exit(0);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid) return 0;
  return !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}
static inline void mt_read_one(void *p) {
  volatile char c = *(const volatile char *)p;
  (void)c;
}
/* 1 when a child that reads p faults */
static inline int mt_read_faults(const volatile char *p) {
  return mt_child_faults(mt_read_one, (void *)(uintptr_t)p);
}

#endif /* MT_READ_FAULTS_H */
