/* SPDX-License-Identifier: Apache-2.0 */
/* kv-probe: one call of libnats's key-value API on the `snapback` bucket, for the sync tests.
 *
 *   kv-probe URL USER put KEY VALUE     bind the bucket (create it, history 5, if it does not exist),
 *                                       put VALUE's bytes; prints "revision N"
 *   kv-probe URL USER get KEY           prints "value HEX"; exit 3 if the key has no value
 *   kv-probe URL USER watch PATTERN     prints "key KEY HEX" for each key's latest value, then "end"
 *   kv-probe URL USER delete-bucket     deletes the bucket (js_DeleteKeyValue); prints "deleted"
 *   kv-probe URL USER sniff SUBJECT S   subscribes to SUBJECT for S seconds; prints "msg SUBJECT HEX"
 *                                       for each message
 *
 * Values are printed as the hex of their bytes (snapback-sync's are protobuf).
 *
 * The password is read from the environment (KV_PROBE_PASSWORD). These are the calls snapback-sync
 * makes (kvStore_Put/Get/Watch), so the subjects they send are the ones the permissions of
 * config/nats-server.conf must allow. A refused publish is reported by the server as an -ERR that
 * libnats hands to the connection's error handler, while the call itself times out: a permission error
 * prints "permission-error: TEXT" and exits 2. Any other failure exits 1.
 */
#include <nats/nats.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BUCKET "snapback"

static pthread_mutex_t error_lock = PTHREAD_MUTEX_INITIALIZER;
static char permission_error[512];

static void on_error(natsConnection *nc, natsSubscription *sub, natsStatus status, void *closure) {
    (void)sub;
    (void)closure;
    const char *text = NULL;
    natsConnection_GetLastError(nc, &text);
    if (status == NATS_NOT_PERMITTED || (text != NULL && strstr(text, "Permissions Violation") != NULL)) {
        pthread_mutex_lock(&error_lock);
        if (permission_error[0] == 0)
            snprintf(permission_error, sizeof permission_error, "%s", text != NULL ? text : "not permitted");
        pthread_mutex_unlock(&error_lock);
    }
}

/* Exits with the failure: 2 when the server refused a subject, else 1. */
static void fail(natsConnection *nc, const char *what, natsStatus status) {
    char refused[512];
    pthread_mutex_lock(&error_lock);
    snprintf(refused, sizeof refused, "%s", permission_error);
    pthread_mutex_unlock(&error_lock);
    if (refused[0] == 0 && nc != NULL) {
        const char *text = NULL;
        if (natsConnection_GetLastError(nc, &text) == NATS_NOT_PERMITTED && text != NULL)
            snprintf(refused, sizeof refused, "%s", text);
    }
    if (refused[0] != 0) {
        printf("permission-error: %s (%s: %s)\n", refused, what, natsStatus_GetText(status));
        fflush(stdout);
        exit(2);
    }
    fprintf(stderr, "kv-probe: %s: %s %s\n", what, natsStatus_GetText(status), nats_GetLastError(NULL));
    exit(1);
}

static kvStore *bind(natsConnection *nc, jsCtx *js, int create) {
    kvStore *kv = NULL;
    natsStatus s = js_KeyValue(&kv, js, BUCKET);
    if (s == NATS_NOT_FOUND && create) {
        kvConfig config;
        kvConfig_Init(&config);
        config.Bucket = BUCKET;
        config.History = 5;
        s = js_CreateKeyValue(&kv, js, &config);
    }
    if (s == NATS_NOT_FOUND) {
        printf("no-bucket\n");
        exit(3);
    }
    if (s != NATS_OK)
        fail(nc, "bind", s);
    return kv;
}

static void print_hex(const void *bytes, int length) {
    for (int i = 0; i < length; i++)
        printf("%02x", ((const unsigned char *)bytes)[i]);
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: kv-probe URL USER put KEY VALUE | get KEY | watch PATTERN | delete-bucket | sniff SUBJECT SECONDS\n");
        return 64;
    }
    const char *password = getenv("KV_PROBE_PASSWORD");
    const char *command = argv[3];
    natsOptions *options = NULL;
    natsConnection *nc = NULL;
    jsCtx *js = NULL;
    jsOptions js_options;
    natsStatus s = natsOptions_Create(&options);
    if (s == NATS_OK)
        s = natsOptions_SetURL(options, argv[1]);
    if (s == NATS_OK)
        s = natsOptions_SetUserInfo(options, argv[2], password != NULL ? password : "");
    if (s == NATS_OK)
        s = natsOptions_SetErrorHandler(options, on_error, NULL);
    if (s == NATS_OK)
        s = natsOptions_SetTimeout(options, 10000);
    if (s == NATS_OK)
        s = natsConnection_Connect(&nc, options);
    if (s != NATS_OK)
        fail(NULL, "connect", s);
    jsOptions_Init(&js_options);
    /* A refused request has no answer: it ends at this bound, the error already reported. */
    js_options.Wait = 4000;
    s = natsConnection_JetStream(&js, nc, &js_options);
    if (s != NATS_OK)
        fail(nc, "jetstream", s);

    if (strcmp(command, "put") == 0 && argc == 6) {
        kvStore *kv = bind(nc, js, 1);
        uint64_t revision = 0;
        s = kvStore_PutString(&revision, kv, argv[4], argv[5]);
        if (s != NATS_OK)
            fail(nc, "put", s);
        printf("revision %llu\n", (unsigned long long)revision);
        kvStore_Destroy(kv);
    } else if (strcmp(command, "get") == 0 && argc == 5) {
        kvStore *kv = bind(nc, js, 0);
        kvEntry *entry = NULL;
        s = kvStore_Get(&entry, kv, argv[4]);
        if (s == NATS_NOT_FOUND) {
            printf("not-found\n");
            return 3;
        }
        if (s != NATS_OK)
            fail(nc, "get", s);
        printf("value ");
        print_hex(kvEntry_Value(entry), kvEntry_ValueLen(entry));
        printf("\n");
        kvEntry_Destroy(entry);
        kvStore_Destroy(kv);
    } else if (strcmp(command, "watch") == 0 && argc == 5) {
        kvStore *kv = bind(nc, js, 0);
        kvWatcher *watcher = NULL;
        kvWatchOptions watch_options;
        kvWatchOptions_Init(&watch_options);
        watch_options.IgnoreDeletes = true;
        s = kvStore_Watch(&watcher, kv, argv[4], &watch_options);
        if (s != NATS_OK)
            fail(nc, "watch", s);
        for (;;) {
            kvEntry *entry = NULL;
            /* A NULL entry marks the end of the values the bucket held when the watch began. */
            s = kvWatcher_Next(&entry, watcher, 10000);
            if (s != NATS_OK)
                fail(nc, "watch next", s);
            if (entry == NULL)
                break;
            printf("key %s ", kvEntry_Key(entry));
            print_hex(kvEntry_Value(entry), kvEntry_ValueLen(entry));
            printf("\n");
            kvEntry_Destroy(entry);
        }
        printf("end\n");
        kvWatcher_Stop(watcher);
        kvWatcher_Destroy(watcher);
        kvStore_Destroy(kv);
    } else if (strcmp(command, "delete-bucket") == 0 && argc == 4) {
        s = js_DeleteKeyValue(js, BUCKET);
        if (s != NATS_OK)
            fail(nc, "delete-bucket", s);
        printf("deleted\n");
    } else if (strcmp(command, "sniff") == 0 && argc == 6) {
        natsSubscription *sub = NULL;
        s = natsConnection_SubscribeSync(&sub, nc, argv[4]);
        if (s == NATS_OK)
            s = natsConnection_Flush(nc);
        if (s != NATS_OK)
            fail(nc, "subscribe", s);
        printf("listening\n");
        fflush(stdout);
        int64_t until = nats_Now() + 1000 * (int64_t)atoi(argv[5]);
        for (int64_t now = nats_Now(); now < until; now = nats_Now()) {
            natsMsg *msg = NULL;
            s = natsSubscription_NextMsg(&msg, sub, until - now);
            if (s == NATS_TIMEOUT)
                break;
            if (s != NATS_OK)
                fail(nc, "sniff", s);
            printf("msg %s ", natsMsg_GetSubject(msg));
            print_hex(natsMsg_GetData(msg), natsMsg_GetDataLength(msg));
            printf("\n");
            fflush(stdout);
            natsMsg_Destroy(msg);
        }
        natsSubscription_Destroy(sub);
    } else {
        fprintf(stderr, "kv-probe: unknown command or wrong arguments: %s\n", command);
        return 64;
    }
    pthread_mutex_lock(&error_lock);
    int refused = permission_error[0] != 0;
    pthread_mutex_unlock(&error_lock);
    if (refused)
        fail(nc, command, NATS_NOT_PERMITTED);
    jsCtx_Destroy(js);
    natsConnection_Destroy(nc);
    natsOptions_Destroy(options);
    nats_Close();
    return 0;
}
