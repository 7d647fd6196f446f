/* h5edit.c - edits one thing in an HDF5 file, so that CLI tests can break a
 * real golden file in a precise way without h5py:
 *   h5edit FILE attr-str OBJECT NAME VALUE   (re)write a string attribute
 *   h5edit FILE attr-f64 OBJECT NAME VALUE   (re)write a float64 attribute
 *   h5edit FILE link OBJECT NEW_PATH         add a hard link to OBJECT
 * Strings are variable-length UTF-8, as h5py writes them. Exit 0, or 1 with
 * a message. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hdf5.h>

static int usage(void) {
  fprintf(stderr,
          "usage: h5edit FILE attr-str OBJECT NAME VALUE\n"
          "       h5edit FILE attr-f64 OBJECT NAME VALUE\n"
          "       h5edit FILE link OBJECT NEW_PATH\n");
  return 1;
}

static int put_attr(hid_t obj, const char *name, hid_t type, const void *v) {
  if (H5Aexists(obj, name) > 0 && H5Adelete(obj, name) < 0) return -1;
  hid_t s = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(obj, name, type, s, H5P_DEFAULT, H5P_DEFAULT);
  int bad = a < 0 || H5Awrite(a, type, v) < 0;
  if (a >= 0) H5Aclose(a);
  H5Sclose(s);
  return bad ? -1 : 0;
}

int main(int argc, char **argv) {
  if (argc < 5) return usage();
  const char *path = argv[1], *cmd = argv[2], *obj = argv[3];
  int bad = 0;
  hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  if (f < 0) {
    fprintf(stderr, "h5edit: cannot open %s\n", path);
    return 1;
  }
  if (!strcmp(cmd, "link")) {
    bad = H5Lcreate_hard(f, obj, f, argv[4], H5P_DEFAULT, H5P_DEFAULT) < 0;
  } else if ((!strcmp(cmd, "attr-str") || !strcmp(cmd, "attr-f64")) && argc == 6) {
    hid_t o = H5Oopen(f, obj, H5P_DEFAULT);
    if (o < 0) {
      bad = 1;
    } else if (!strcmp(cmd, "attr-str")) {
      hid_t t = H5Tcopy(H5T_C_S1);
      H5Tset_size(t, H5T_VARIABLE);
      H5Tset_cset(t, H5T_CSET_UTF8);
      const char *v = argv[5];
      bad = put_attr(o, argv[4], t, &v) < 0;
      H5Tclose(t);
    } else {
      double v = strtod(argv[5], NULL);
      bad = put_attr(o, argv[4], H5T_IEEE_F64LE, &v) < 0;
    }
    if (o >= 0) H5Oclose(o);
  } else {
    H5Fclose(f);
    return usage();
  }
  if (H5Fclose(f) < 0) bad = 1;
  if (bad) fprintf(stderr, "h5edit: %s %s %s failed\n", path, cmd, obj);
  return bad;
}
