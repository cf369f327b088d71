/* SPDX-License-Identifier: Apache-2.0 */
/* stream-probe: the telemetry stream as libnats sees it, for make test-telemetry.
 *
 *   stream-probe URL STREAM last SUBJECT            prints "msg SEQ HEX" of the subject's last message
 *   stream-probe URL STREAM republish SUBJECT ID    publishes the subject's last message again, with the
 *                                                   message id ID; prints "duplicate 0|1 seq N"
 *   stream-probe URL STREAM pending CONSUMER        prints "pending N" (not yet delivered plus delivered
 *                                                   and not acked) of the durable consumer
 *
 * A re-publish with the id the agent gave it is one the stream deduplicates (within its window); with
 * another id it is stored again, and snapback-fleet must skip it (its seq is the box's last applied).
 * Any failure exits 1.
 */
#include <nats/nats.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void fail(const char *what, natsStatus status) {
    const char *text = nats_GetLastError(NULL);
    fprintf(stderr, "stream-probe: %s: %s (%s)\n", what, natsStatus_GetText(status), text ? text : "");
    exit(1);
}

int main(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: stream-probe URL STREAM last SUBJECT | republish SUBJECT ID\n");
        return 2;
    }
    const char *url = argv[1], *stream = argv[2], *command = argv[3], *subject = argv[4];
    natsConnection *nc = NULL;
    jsCtx *js = NULL;
    natsStatus s = natsConnection_ConnectTo(&nc, url);
    if (s != NATS_OK) fail("connect", s);
    if ((s = natsConnection_JetStream(&js, nc, NULL)) != NATS_OK) fail("jetstream", s);
    jsErrCode code = 0;
    if (!strcmp(command, "pending")) {
        jsConsumerInfo *ci = NULL;
        if ((s = js_GetConsumerInfo(&ci, js, stream, subject, NULL, &code)) != NATS_OK) fail("consumer info", s);
        printf("pending %llu\n", (unsigned long long)(ci->NumPending + (uint64_t)ci->NumAckPending));
        jsConsumerInfo_Destroy(ci);
        jsCtx_Destroy(js);
        natsConnection_Destroy(nc);
        return 0;
    }
    natsMsg *msg = NULL;
    if ((s = js_GetLastMsg(&msg, js, stream, subject, NULL, &code)) != NATS_OK) fail("last message", s);
    const unsigned char *data = (const unsigned char *)natsMsg_GetData(msg);
    int len = natsMsg_GetDataLength(msg);
    if (!strcmp(command, "last")) {
        printf("msg %llu ", (unsigned long long)natsMsg_GetSequence(msg));
        for (int i = 0; i < len; i++) printf("%02x", data[i]);
        printf("\n");
    } else if (!strcmp(command, "republish") && argc == 6) {
        jsPubOptions options;
        jsPubOptions_Init(&options);
        options.MsgId = argv[5];
        jsPubAck *ack = NULL;
        if ((s = js_Publish(&ack, js, subject, data, len, &options, &code)) != NATS_OK) fail("publish", s);
        printf("duplicate %d seq %llu\n", ack->Duplicate ? 1 : 0, (unsigned long long)ack->Sequence);
        jsPubAck_Destroy(ack);
    } else {
        fprintf(stderr, "stream-probe: unknown command %s\n", command);
        return 2;
    }
    natsMsg_Destroy(msg);
    jsCtx_Destroy(js);
    natsConnection_Destroy(nc);
    return 0;
}
