// zabmc (reports/bugs/trunc-keeps-uncommitted.md): what ZooKeeper's FileTxnLog.truncate(z) keeps,
// when the log holds a transaction of zxid z and when it does not. Written for that report.
//   javac -cp "JARS/*" TruncProbe.java && java -cp "JARS/*:." TruncProbe 2>/dev/null | grep ^logged
// JARS: a ZooKeeper build's jars (zabmc's cache: ~/.cache/zabmc/releases/3.9.5/lib).
import java.io.File;
import java.nio.file.Files;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.server.Request;
import org.apache.zookeeper.server.persistence.FileTxnLog;
import org.apache.zookeeper.server.persistence.TxnLog.TxnIterator;
import org.apache.zookeeper.txn.SetDataTxn;
import org.apache.zookeeper.txn.TxnHeader;

public class TruncProbe {
    static void append(FileTxnLog log, long zxid) throws Exception {
        TxnHeader hdr = new TxnHeader(1, 1, zxid, 1, ZooDefs.OpCode.setData);
        log.append(new Request(0, 0, 0, hdr, new SetDataTxn("/w", new byte[0], 1), zxid));
        log.commit();
    }

    static String left(File dir) throws Exception {
        StringBuilder sb = new StringBuilder();
        try (FileTxnLog log = new FileTxnLog(dir)) {
            TxnIterator it = log.read(0);
            while (it.getHeader() != null) {
                sb.append(" 0x").append(Long.toHexString(it.getHeader().getZxid()));
                if (!it.next()) {
                    break;
                }
            }
            it.close();
        }
        return sb.length() == 0 ? " (none)" : sb.toString();
    }

    static void run(long[] logged, long truncTo) throws Exception {
        File dir = Files.createTempDirectory("trunc-probe").toFile();
        try (FileTxnLog log = new FileTxnLog(dir)) {
            for (long z : logged) {
                append(log, z);
            }
        }
        StringBuilder in = new StringBuilder();
        for (long z : logged) {
            in.append(" 0x").append(Long.toHexString(z));
        }
        try (FileTxnLog log = new FileTxnLog(dir)) {
            log.truncate(truncTo);
        }
        System.out.println("logged" + in + "; truncate(0x" + Long.toHexString(truncTo) + ") leaves" + left(dir));
    }

    public static void main(String[] args) throws Exception {
        run(new long[] {0x100000001L}, 0x100000000L);                          // the schedule's case
        run(new long[] {0x100000001L, 0x100000002L}, 0x100000000L);
        run(new long[] {0x100000001L, 0x100000002L, 0x100000003L}, 0x100000001L);  // a zxid the log holds
    }
}
