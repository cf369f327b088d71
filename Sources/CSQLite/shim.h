/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SNAPBACK_CSQLITE_SHIM_H
#define SNAPBACK_CSQLITE_SHIM_H
#include <sqlite3.h>

// SQLITE_TRANSIENT is a cast of -1 to a function pointer, which Swift does not import: these helpers
// make SQLite copy the bytes before the call returns.
static inline int snapback_sqlite3_bind_text(sqlite3_stmt *statement, int index, const char *text, int length) {
    return sqlite3_bind_text(statement, index, text, length, SQLITE_TRANSIENT);
}
static inline int snapback_sqlite3_bind_blob(sqlite3_stmt *statement, int index, const void *bytes, int length) {
    return sqlite3_bind_blob(statement, index, bytes, length, SQLITE_TRANSIENT);
}
#endif
