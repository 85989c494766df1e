/**
 * Every metric kmirror exports, in one table (name, type, help, labels). docs/metrics.md is written from it.
 * Names follow Prometheus conventions with the `kmirror_` prefix; labels are bounded (flows, topics, jobs, brokers;
 * partitions only for the per-partition lag, which `metrics.partition.level.enabled = false` turns off).
 */
export const MetricTypes = { COUNTER: 'counter', GAUGE: 'gauge', HISTOGRAM: 'histogram' } as const
export type MetricType = (typeof MetricTypes)[keyof typeof MetricTypes]

export interface MetricDefinition {
  readonly name: string
  readonly type: MetricType
  readonly help: string
  readonly labels: readonly string[]
  /** Histograms only: the upper bounds of the buckets. */
  readonly buckets?: readonly number[]
}

const { COUNTER, GAUGE, HISTOGRAM } = MetricTypes

/**
 * Buckets of the latency histograms, in milliseconds: from 5 ms (a copy within one fetch wait) to 6 hours (a backlog
 * after a long outage); `histogram_quantile` interpolates within a bucket, so a quantile is as fine as its bucket.
 */
export const LATENCY_BUCKETS_MS = [5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10_000, 30_000, 60_000, 300_000, 900_000, 3_600_000, 21_600_000] as const

export const MetricDefinitions = {
  recordsCopied: { name: 'kmirror_records_copied_total', type: COUNTER, help: 'Records written to the target and acknowledged.', labels: ['flow', 'topic'] },
  bytesCopied: { name: 'kmirror_bytes_copied_total', type: COUNTER, help: 'Bytes copied: record batches forwarded as they are count their size on the wire (compressed), re-encoded records their key, value and header bytes.', labels: ['flow', 'topic'] },
  batchesForwarded: { name: 'kmirror_batches_forwarded_total', type: COUNTER, help: 'Source record batches written to the target as they are (not decompressed or re-encoded).', labels: ['flow', 'topic'] },
  transactionsCommitted: { name: 'kmirror_transactions_committed_total', type: COUNTER, help: 'Exactly-once mode: replication rounds committed as one target transaction (rounds that wrote nothing open none).', labels: ['flow'] },
  transactionsAborted: { name: 'kmirror_transactions_aborted_total', type: COUNTER, help: 'Exactly-once mode: rounds whose transaction was aborted after a failure; their records are copied again from the committed progress.', labels: ['flow'] },
  sourcePartitionsRestarted: { name: 'kmirror_source_partitions_restarted_total', type: COUNTER, help: 'Partitions whose source topic was deleted and created again under the same name (a new topic id in a fetch answer) while this instance copied them: each is copied from the new topic\'s log start into the same remote topic.', labels: ['flow', 'topic'] },
  remotePartitionsCopiedAgain: { name: 'kmirror_remote_partitions_copied_again_total', type: COUNTER, help: 'Partitions whose remote topic was deleted and created again on the target (a new topic id) while this instance copied them: each is copied again from the source\'s log start.', labels: ['flow', 'topic'] },
  recordsLostToRetention: { name: 'kmirror_records_lost_to_retention_total', type: COUNTER, help: 'Source offsets deleted by retention before they were copied.', labels: ['flow', 'topic'] },
  replicationLatency: { name: 'kmirror_replication_latency_ms', type: HISTOGRAM, buckets: LATENCY_BUCKETS_MS, help: 'MM2\'s replication-latency-ms: the time the target acknowledged a batch minus the source timestamp of its first record (its oldest, in producer order), one observation per batch written.', labels: ['flow', 'topic'] },
  recordAge: { name: 'kmirror_record_age_ms', type: HISTOGRAM, buckets: LATENCY_BUCKETS_MS, help: 'MM2\'s record-age-ms: the time a batch was fetched from the source minus the source timestamp of its first record, one observation per batch fetched for writing.', labels: ['flow', 'topic'] },
  replicationLag: { name: 'kmirror_replication_lag_records', type: GAUGE, help: 'Records on the source not yet copied, per topic; NaN while the lag of one of its partitions is unknown (it cannot be read, or was not read yet).', labels: ['flow', 'topic'] },
  replicationLagSeconds: { name: 'kmirror_replication_lag_seconds', type: GAUGE, help: 'Age of the oldest source record not yet copied (now minus its timestamp), the largest over the topic\'s partitions; 0 when caught up; NaN while one of its partitions is unknown (the source refusing it, not read yet, or its next record not fetched yet).', labels: ['flow', 'topic'] },
  partitionLagSeconds: { name: 'kmirror_partition_lag_seconds', type: GAUGE, help: 'Per source partition this instance copies: age of its oldest record not yet copied (now minus its timestamp); 0 when caught up; NaN while unknown (the source refusing it, not read yet, or its next record not fetched yet). Off with metrics.partition.level.enabled = false; the series goes when the partition leaves this instance or its topic is deleted.', labels: ['flow', 'topic', 'partition'] },
  partitionLagRecords: { name: 'kmirror_partition_lag_records', type: GAUGE, help: 'Per source partition this instance copies: records on the source not yet copied (high watermark minus position); NaN while unknown. Off with metrics.partition.level.enabled = false.', labels: ['flow', 'topic', 'partition'] },
  lagUnknownPartitions: { name: 'kmirror_replication_lag_unknown_partitions', type: GAUGE, help: 'Partitions whose lag is unknown (the source refusing them, or not read yet), per topic.', labels: ['flow', 'topic'] },
  failingPartitions: { name: 'kmirror_failing_partitions', type: GAUGE, help: 'Partitions set aside because the source or the target refuses them, by Kafka error (e.g. TOPIC_AUTHORIZATION_FAILED, MESSAGE_TOO_LARGE), each retried with back-off; and partitions the target has taken no records of, or the source has given nothing of, for longer than health.stall.threshold.ms (LEADER_NOT_AVAILABLE, NETWORK_EXCEPTION: no leader, or a leader that does not answer), each copied as soon as it does; and source partitions a transaction left open has held for longer than health.transaction.hang.threshold.ms (SOURCE_TRANSACTION_OPEN), each copied as soon as it ends.', labels: ['flow', 'error'] },
  sourcePartitionsHeld: { name: 'kmirror_source_partitions_held', type: GAUGE, help: 'Source partitions a transaction open on the source holds now (read_committed: nothing past its first record is copied until it commits or aborts), from the first round that finds them. Short holds are normal with transactional producers; past health.transaction.hang.threshold.ms each is also counted in kmirror_failing_partitions (SOURCE_TRANSACTION_OPEN), logged and shown failing in /status.', labels: ['flow'] },
  sourceHoldSeconds: { name: 'kmirror_source_hold_seconds', type: GAUGE, help: 'How long the longest current hold of a source partition by an open transaction has lasted, in seconds (0 when none): alert on it sooner than health.transaction.hang.threshold.ms if your producers\' transactions are short.', labels: ['flow'] },
  partitionsWaitingForTarget: { name: 'kmirror_partitions_waiting_for_target', type: GAUGE, help: 'Source partitions with records to copy that the target cannot take yet (no leader for the remote partition, or its leader still loading it: a new remote topic for a few seconds, longer while a target broker is down). They are not read from the source again until a probe of the target finds their leader, or for 10 s at most. A value that stays above 0 names a stall on the target side; past health.stall.threshold.ms each such partition is also counted in kmirror_failing_partitions, logged and shown failing in /status.', labels: ['flow'] },
  fetchFullRequests: { name: 'kmirror_fetch_full_requests_total', type: COUNTER, help: 'Fetch requests of the data path that named every partition of a source broker: the one opening a fetch session, or every request where the broker keeps none.', labels: ['flow'] },
  fetchIncrementalRequests: { name: 'kmirror_fetch_incremental_requests_total', type: COUNTER, help: 'Fetch requests of the data path in a fetch session (KIP-227): only partitions whose position changed, joined or left.', labels: ['flow'] },
  fetchSessionResets: { name: 'kmirror_fetch_session_resets_total', type: COUNTER, help: 'Fetch sessions that ended by an error (a broker restarted or evicted the session, a request failed or timed out); the next fetch from that broker was full.', labels: ['flow'] },
  ready: { name: 'kmirror_ready', type: GAUGE, help: 'Like /readyz: 1 once every flow has started (start-up done, data path running), else 0.', labels: [] },
  flowUp: { name: 'kmirror_flow_up', type: GAUGE, help: '1 while the flow copies: started, not stopped on an error and not stalled (health.stall.threshold.ms); else 0.', labels: ['flow'] },
  groupMembers: { name: 'kmirror_group_members', type: GAUGE, help: 'Instances in the flow\'s group as this instance last saw it (several hosts running the same configuration); absent for a flow that runs alone.', labels: ['flow'] },
  groupLeaseValid: { name: 'kmirror_group_lease_valid', type: GAUGE, help: '1 while this instance\'s lease in the flow\'s group holds (it may write), 0 while it does not: joining, or its work held past a lease that ran out until the coordinator answers (nothing is written meanwhile). Absent for a flow that runs alone.', labels: ['flow'] },
  ownedPartitions: { name: 'kmirror_owned_partitions', type: GAUGE, help: 'Source partitions this instance copies for the flow (all of them alone; its share in a group).', labels: ['flow'] },
  checkpointAge: { name: 'kmirror_checkpoint_age_seconds', type: GAUGE, help: 'Seconds since the checkpoints of the consumer group were last brought up to date on the target: written, or found current (a group whose commits did not move needs none), by the emit-checkpoints job.', labels: ['flow', 'group'] },
  // `job_name`, not `job`: Prometheus sets `job` on every scraped series (the scrape job) and renames a `job` label
  // the target exports to `exported_job`.
  jobRuns: { name: 'kmirror_job_runs_total', type: COUNTER, help: 'Runs of a periodic job (topic refresh, config sync, ACL sync, heartbeats, ...), by job name.', labels: ['flow', 'job_name'] },
  jobFailures: { name: 'kmirror_job_failures_total', type: COUNTER, help: 'Failed runs of a periodic job, by job name; it is retried with back-off.', labels: ['flow', 'job_name'] },
  sourceTopicsDeleted: { name: 'kmirror_source_topics_deleted_total', type: COUNTER, help: 'Replicated source topics that disappeared from the source.', labels: ['flow'] },
  remoteTopicsCreated: { name: 'kmirror_remote_topics_created_total', type: COUNTER, help: 'Remote topics created on the target.', labels: ['flow'] },
  remoteTopicProblems: { name: 'kmirror_remote_topic_problems', type: GAUGE, help: 'Topics that cannot be replicated now (incompatible remote topic, creation refused, source configs refused).', labels: ['flow'] },
  topicConfigsUnsynced: { name: 'kmirror_topic_configs_unsynced', type: GAUGE, help: 'Replicated topics whose configs the last config sync could not read or change (DESCRIBE_CONFIGS or ALTER_CONFIGS refused, for one).', labels: ['flow'] },
  topicConfigsChanged: { name: 'kmirror_topic_configs_changed_total', type: COUNTER, help: 'Topic config keys set or reverted on the target by config sync.', labels: ['flow'] },
  aclsCreated: { name: 'kmirror_acls_created_total', type: COUNTER, help: 'ACL bindings created on the target by ACL sync.', labels: ['flow'] },
  aclsDeleted: { name: 'kmirror_acls_deleted_total', type: COUNTER, help: 'ACL bindings ACL sync had created on the target and deleted because their source binding is gone.', labels: ['flow'] },
  heartbeatsEmitted: { name: 'kmirror_heartbeats_emitted_total', type: COUNTER, help: 'Heartbeat records written.', labels: ['flow'] },
  loopRecordsSkipped: { name: 'kmirror_loop_records_skipped_total', type: COUNTER, help: 'Identity policy: records not copied because they have been on the target already (kmirror.path header), or because another flow of the mesh brings them there.', labels: ['flow', 'topic'] },
  groupOffsetsSynced: { name: 'kmirror_group_offsets_synced_total', type: COUNTER, help: 'Partition offsets of consumer groups committed on the target by group offset sync (sync.group.offsets.enabled).', labels: ['flow'] },
  offsetSyncsPending: { name: 'kmirror_offset_syncs_pending', type: GAUGE, help: 'At-least-once mode: MM2 offset syncs recorded but not written to the offset-syncs topic yet (written beside the data path; grows while that topic cannot be written, thinned past 100,000).', labels: ['flow'] },
  offsetSyncWriteFailures: { name: 'kmirror_offset_sync_write_failures_total', type: COUNTER, help: 'At-least-once mode: failed writes of MM2 offset syncs to the offset-syncs topic (each retried: 200 ms doubling to 5 s apart); the syncs wait meanwhile (kmirror_offset_syncs_pending).', labels: ['flow'] },
  offsetSyncsFailingSince: { name: 'kmirror_offset_syncs_failing_since_seconds', type: GAUGE, help: 'At-least-once mode: Unix time (seconds) of the first failed write of MM2 offset syncs in the failing stretch under way; 0 while they are written.', labels: ['flow'] },
  offsetSyncsThinned: { name: 'kmirror_offset_syncs_thinned_total', type: COUNTER, help: 'MM2 offset syncs dropped unwritten because more than 100,000 waited (their topic unwritable for long): MM2\'s translation from the topic gets coarser there (consumers re-read more, never skip); kmirror\'s own translation stays exact.', labels: ['flow'] },
  groupOffsetSyncSkippedActive: { name: 'kmirror_group_offset_sync_skipped_active_total', type: COUNTER, help: 'Group offset sync: target groups left alone because they have active members (per group and pass).', labels: ['flow'] },
  groupOffsetSyncSkippedInexact: { name: 'kmirror_group_offset_sync_skipped_inexact_total', type: COUNTER, help: 'Group offset sync: partition offsets not written because their translation is not exact (per partition and pass).', labels: ['flow'] },
  brokerSilences: { name: 'kmirror_broker_silences_total', type: COUNTER, help: 'Requests a broker left unanswered on an established connection for their whole bound (a heartbeat given up after session.timeout.ms, a metadata, coordinator, offsets or fetch request after request.timeout.ms): each closed every connection of the process to that broker (frozen, in a long pause, cut off). Alert on a rise.', labels: ['broker'] },
  brokerSlowRequests: { name: 'kmirror_broker_slow_requests_total', type: COUNTER, help: 'Requests of this process a broker left unanswered for 10 s (not a long poll, group join or request waiting for the controller, which brokers hold by design), each counted once: the broker is slow, or frozen and not yet fenced (a hung disk, long GC pauses, followers behind under acks=all, quota throttling). Logged at warn once a minute per broker; nothing is cut for it.', labels: ['broker'] },
  quotaThrottleSeconds: { name: 'kmirror_quota_throttle_seconds_total', type: COUNTER, help: 'Seconds of pause brokers asked of this process for a client quota (KIP-219: the answer\'s throttle time, waited out before the next request to that broker), by broker and request (Produce, Fetch, ...): a target broker throttling Produce paces every partition a flow writes. Logged at warn once a minute per broker and request.', labels: ['broker', 'request'] },
  sourceFetchFailures: { name: 'kmirror_source_fetch_failures_total', type: COUNTER, help: 'Data-path fetches from one source broker that failed (connection refused or cut, the request failed or timed out) while other brokers of its cluster answered: the partitions it leads wait unread and it is asked again after a back-off (200 ms doubling, 2 s at most; twice as long as a try that timed out, 30 s at most), the others copy on. Each failed try counts. A fetch failing on every broker at once is a failed replication step instead.', labels: ['broker'] },
  groupOffsetSyncSkippedNotForward: { name: 'kmirror_group_offset_sync_skipped_not_forward_total', type: COUNTER, help: 'Group offset sync: partition offsets not written because the target group is already further (never rewound; per partition and pass).', labels: ['flow'] }
} as const satisfies Record<string, MetricDefinition>

export type MetricKey = keyof typeof MetricDefinitions
