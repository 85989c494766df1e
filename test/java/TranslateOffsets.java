// Calls MM2's own client library, RemoteClusterUtils.translateOffsets (connect-mirror-client, from the
// Maven jars), and prints its answer as JSON lines: {"topic":"A.t","partition":0,"offset":42}.
// Used by kmirror's integration tests to check that MM2's readers understand kmirror's checkpoints.
// Run: java -cp 'kafka/lib/*' test/java/TranslateOffsets.java BOOTSTRAP SOURCE_ALIAS GROUP
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.connect.mirror.RemoteClusterUtils;

public class TranslateOffsets {
    public static void main(String[] args) throws Exception {
        if (args.length != 3) {
            System.err.println("usage: TranslateOffsets BOOTSTRAP SOURCE_ALIAS GROUP");
            System.exit(2);
        }
        Map<String, Object> props = new HashMap<>();
        props.put("bootstrap.servers", args[0]);
        Map<TopicPartition, OffsetAndMetadata> offsets =
            RemoteClusterUtils.translateOffsets(props, args[1], args[2], Duration.ofSeconds(30));
        for (Map.Entry<TopicPartition, OffsetAndMetadata> e : offsets.entrySet()) {
            System.out.printf("{\"topic\":\"%s\",\"partition\":%d,\"offset\":%d}%n",
                e.getKey().topic(), e.getKey().partition(), e.getValue().offset());
        }
    }
}
