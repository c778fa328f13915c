// A warm JVM for stdin/stdout programs: one JVM serves every test of a program.
//
//   java ... -cp prog.jar RUNNER <main class> <prog.jar>
//
// Starting a JVM costs hundreds of milliseconds; loading a program's classes again, a few.
// The supervisor sends one request per test on descriptor 5 (a 4-byte big-endian length, a
// JSON header, then the test's stdin) and reads the reply on descriptor 6 (a header, then
// stdout and stderr). Each test loads the program's classes in a class loader of its own
// (fresh static state), with System.in, System.out and System.err its own, and runs main
// in a thread group of its own; the test ends when main and every non-daemon thread it
// started have ended, or at System.exit (whose status is the test's; output after it is
// dropped, as a JVM that exits writes nothing more).
//
// This process is the program's: nothing here is evidence. The supervisor enforces the
// limits and the host judges the output; a program that breaks the runner fails only its
// own test, and the next test gets a new runner.
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.BufferedInputStream;
import java.io.EOFException;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

public final class RUNNER {
    /** Thrown by System.exit inside a test: unwinds the test's thread. */
    static final class Exit extends SecurityException {
        private static final long serialVersionUID = 1L;
        final int status;

        Exit(int status) {
            super("System.exit(" + status + ")");
            this.status = status;
        }
    }

    /** A test's output: counted in full, kept up to the cap, closed by System.exit. */
    static final class Capped extends OutputStream {
        final ByteArrayOutputStream kept = new ByteArrayOutputStream();
        final long cap;
        long size;
        volatile boolean closed;

        Capped(long cap) {
            this.cap = cap;
        }

        @Override
        public synchronized void write(int b) {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public synchronized void write(byte[] b, int off, int len) {
            if (closed) return;
            size += len;
            long room = cap + 1 - kept.size();
            if (room > 0) kept.write(b, off, (int) Math.min(room, len));
        }
    }

    static volatile Capped out;
    static volatile Capped err;
    static volatile Integer exitStatus;

    /** An inherited descriptor by number (java.io is opened to this class for it). */
    static java.io.FileDescriptor descriptor(int number) throws Exception {
        java.io.FileDescriptor fd = new java.io.FileDescriptor();
        java.lang.reflect.Field field = java.io.FileDescriptor.class.getDeclaredField("fd");
        field.setAccessible(true);
        field.setInt(fd, number);
        return fd;
    }

    static long field(String json, String name) {
        Matcher m = Pattern.compile("\"" + name + "\"\\s*:\\s*(\\d+)").matcher(json);
        return m.find() ? Long.parseLong(m.group(1)) : 0L;
    }

    public static void main(String[] args) throws Exception {
        final String mainClass = args[0];
        final URL jar = new java.io.File(args[1]).toURI().toURL();
        final ClassLoader parent = RUNNER.class.getClassLoader().getParent();
        DataInputStream requests =
                new DataInputStream(new BufferedInputStream(new FileInputStream(descriptor(5))));
        OutputStream replies = new FileOutputStream(descriptor(6));
        // Java 17 warns on System.err that security managers are going away: not the
        // program's output.
        PrintStream realErr = System.err;
        System.setErr(new PrintStream(OutputStream.nullOutputStream()));
        System.setSecurityManager(
                new SecurityManager() {
                    @Override
                    public void checkExit(int status) {
                        if (exitStatus == null) exitStatus = status;
                        if (out != null) out.closed = true;
                        if (err != null) err.closed = true;
                        throw new Exit(status);
                    }

                    @Override
                    public void checkPermission(java.security.Permission perm) {}

                    @Override
                    public void checkPermission(java.security.Permission perm, Object context) {}
                });
        System.setErr(realErr);
        byte[] ready = "{\"ready\": true}".getBytes(StandardCharsets.UTF_8);
        replies.write(new byte[] {0, 0, 0, (byte) ready.length});
        replies.write(ready);
        replies.flush();
        while (true) {
            int size;
            try {
                size = requests.readInt();
            } catch (EOFException end) {
                Runtime.getRuntime().halt(0);
                return;
            }
            byte[] head = new byte[size];
            requests.readFully(head);
            String header = new String(head, StandardCharsets.UTF_8);
            byte[] input = new byte[(int) field(header, "stdin_bytes")];
            requests.readFully(input);
            long cap = field(header, "max_output_bytes");
            out = new Capped(cap);
            err = new Capped(cap);
            exitStatus = null;
            System.setIn(new ByteArrayInputStream(input));
            System.setOut(new PrintStream(out, false, StandardCharsets.UTF_8));
            System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
            final int[] status = {0};
            ThreadGroup group = new ThreadGroup("test");
            Thread main =
                    new Thread(
                            group,
                            () -> {
                                try (URLClassLoader loader = new URLClassLoader(new URL[] {jar}, parent)) {
                                    Class<?> c = Class.forName(mainClass, true, loader);
                                    Method m = c.getMethod("main", String[].class);
                                    m.setAccessible(true); // a main class need not be public
                                    m.invoke(null, (Object) new String[0]);
                                } catch (InvocationTargetException e) {
                                    uncaught(e.getCause(), status);
                                } catch (ExceptionInInitializerError e) {
                                    uncaught(e, status);
                                } catch (Throwable e) {
                                    uncaught(e, status);
                                }
                            },
                            "main");
            main.setUncaughtExceptionHandler((t, e) -> uncaught(e, status));
            main.start();
            while (main.isAlive() && exitStatus == null && !over()) main.join(20);
            // Like a JVM: the program ends when its last non-daemon thread does.
            while (exitStatus == null && !over()) {
                Thread[] threads = new Thread[group.activeCount() + 8];
                int n = group.enumerate(threads, true);
                Thread waitFor = null;
                for (int i = 0; i < n; i++) {
                    if (!threads[i].isDaemon() && threads[i].isAlive()) waitFor = threads[i];
                }
                if (waitFor == null) break;
                waitFor.join(20);
            }
            System.out.flush();
            System.err.flush();
            // Threads of the test still running (System.exit left them): this JVM is not
            // used again.
            boolean retire = group.activeCount() > 0;
            int code = exitStatus != null ? exitStatus : status[0];
            byte[] o = out.kept.toByteArray();
            byte[] e = err.kept.toByteArray();
            String exceeded =
                    out.size > cap ? "\"stdout\"" : (err.size > cap ? "\"stderr\"" : "null");
            String reply =
                    "{\"exit_code\": " + (code & 0xFF) + ", \"output_exceeded\": " + exceeded
                            + ", \"stdout_bytes\": " + o.length + ", \"stderr_bytes\": "
                            + e.length + ", \"retire\": " + retire + "}";
            byte[] body = reply.getBytes(StandardCharsets.UTF_8);
            ByteArrayOutputStream frame = new ByteArrayOutputStream();
            frame.write(new byte[] {
                (byte) (body.length >>> 24), (byte) (body.length >>> 16),
                (byte) (body.length >>> 8), (byte) body.length});
            frame.write(body);
            frame.write(o);
            frame.write(e);
            replies.write(frame.toByteArray());
            replies.flush();
        }
    }

    /** Over the output cap: the test is over (the supervisor would kill a JVM of its own). */
    static boolean over() {
        return out.size > out.cap || err.size > err.cap;
    }

    /** What the JVM prints for an exception that ends main, and status 1. */
    static void uncaught(Throwable e, int[] status) {
        if (e instanceof Exit) return;
        Throwable cause = e;
        while (cause instanceof InvocationTargetException && cause.getCause() != null) {
            cause = cause.getCause();
        }
        if (cause instanceof Exit) return;
        status[0] = 1;
        System.err.print("Exception in thread \"" + Thread.currentThread().getName() + "\" ");
        cause.printStackTrace(System.err);
    }
}
