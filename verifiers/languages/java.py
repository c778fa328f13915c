"""Java: compiled once per program with ``javac``, its stdin/stdout tests in one warm JVM.

stdin/stdout programs are compiled whole (the file is named after the class that holds
``main``, so Kattis-style ``public class Hello`` submissions compile) and their tests run
in one JVM kept for the program (``_java_runner.java``, compiled with it: a class loader,
``System`` streams and thread group per test; a JVM starts in hundreds of milliseconds,
a test's classes load in a few), or as ``java -cp prog.jar Hello`` per test for a program
that names the process's own descriptors or runtime, or with a checker.

A program with test code (HumanEval-X: a ``public class Main`` whose ``main`` throws
``AssertionError``) is compiled beside the tests and a generated harness class, whose name
ends in a secret of this process; the harness is the class the JVM starts: it reads the
sandbox's nonce before any class of the program or the tests is initialised, runs the
tests' ``main``, and writes the pass record only when it returned. A thrown
``AssertionError`` is a wrong answer, any other throwable a runtime error.

The tests share the JVM with the program, so before it is built the program is checked
against :class:`JavaCodePolicy`: imports from an allow-list of packages, no exit, halt,
threads, reflection, files or ``sun.misc.Unsafe``, no static initialisers that run code,
no classes named like what the tests or the harness use, no ``equals``/``hashCode``/
``toString`` of its own and no subclasses of library types (which would decide the tests'
comparisons), the declared signature kept. Java is memory safe, so what the program cannot
name it cannot reach: the nonce sits in a private field of a class it cannot name.

Compiling and running both start a JVM: their address space is reserved beyond the
memory limit (``runtime_reserve``), with the heap capped below it, so that running out of
heap is an ``OutOfMemoryError`` (``memory_limit``) rather than a failed start.
"""

from __future__ import annotations

import functools
import os
import re
import secrets
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from importlib import resources

import tree_sitter

from verifiers.cases import CASE_KINDS, ONE_TEST, SUM_TESTS, Case, table
from verifiers.keys import build_key
from verifiers.languages.code_policy import Refusal, Source, first, leaves, normalized, walk
from verifiers.languages.common import (
    TreeSitterLanguage,
    judge_first,
    judge_pass_record,
    pin_toolchain,
    stderr_tail,
)
from verifiers.limits import Limits
from verifiers.program import (
    ImageRecipe,
    ProcessResult,
    Program,
    ProgramTest,
    Step,
    Toolchain,
    ToolchainSpec,
)
from verifiers.protocols import TestOutcome
from verifiers.results import Status
from verifiers.specs import AssertScriptTests, CompareOptions, StdioTests, TestSpec
from verifiers.toolchains import HOST, require, tool_version

GRAMMAR = "tree_sitter_java"
#: The JVM out of heap, metaspace or committable memory. ("unable to create native
#: thread" is an OutOfMemoryError too, but the process limit is what it usually meets.)
MEMORY_MARKERS = (
    b"java.lang.OutOfMemoryError: Java heap space",
    b"java.lang.OutOfMemoryError: Requested array size",
    b"java.lang.OutOfMemoryError: GC overhead",
    b"java.lang.OutOfMemoryError: Metaspace",
    b"Could not reserve enough space",
    b"insufficient memory for the Java Runtime",
    b"error='Not enough space'",
)
#: JVM options of every run: one GC thread and few compiler threads (threads count against
#: the process limit), no shared performance file, a small initial heap. Every Java thread
#: gets the ``-Xss`` stack and the kernel counts stacks as data (``RLIMIT_DATA`` is the
#: memory limit), so 8 MB: deep recursion, without the JVM's own threads using up the
#: limit (64 MB stacks took 540 MB before a program ran, measured with NMT). Where the
#: address space is the bound (gVisor ignores ``RLIMIT_DATA``), the JVM's default
#: reservations (1 GiB of class space, 240 MB of code cache) alone exceed memory plus
#: ``RUNTIME_RESERVE_MB`` and it cannot start: both are reserved small.
JVM_FLAGS = (
    "-XX:+UseSerialGC",
    "-XX:ActiveProcessorCount=1",
    "-XX:-UsePerfData",
    "-Xshare:auto",
    "-Xss8m",
    "-Xms16m",
    "-XX:CompressedClassSpaceSize=64m",
    "-XX:ReservedCodeCacheSize=64m",
    "-ea",
)
#: What the JVM itself needs beside the heap (metaspace, code cache, thread stacks).
JVM_OVERHEAD_MB = 96
#: javac's own JVM: C1 only (javac runs too briefly for C2 to pay off).
JAVAC_FLAGS = (
    "-J-XX:+UseSerialGC",
    "-J-XX:TieredStopAtLevel=1",
    "-J-XX:-UsePerfData",
    "-J-Xss16m",
    "-encoding",
    "UTF-8",
    "-nowarn",
    "-Xlint:none",
)

# The harness class: its name ends in a secret of this process, so that the program (in
# the same package) cannot name it; it names every type by its full name, so that classes
# the program declares cannot stand in for them.
_SECRET = secrets.token_hex(6)
HARNESS_CLASS = f"VfHarness{_SECRET}"
_HARNESS = """public final class HARNESS {
    private static java.lang.String nonce = "";

    private HARNESS() {}

    private static java.lang.String json(java.lang.String text) {
        java.lang.StringBuilder out = new java.lang.StringBuilder();
        int n = java.lang.Math.min(text.length(), 4000);
        for (int i = 0; i < n; i++) {
            char c = text.charAt(i);
            if (c == '"' || c == '\\\\') {
                out.append('\\\\').append(c);
            } else if (c < 0x20) {
                out.append(java.lang.String.format("\\\\u%04x", (int) c));
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }

    // The sandbox's descriptors (3: the channel, 4: the nonce) by number: the JDK opens
    // no descriptor by number, so the harness sets a FileDescriptor's (java.io is opened
    // to it with --add-opens; the program may use no reflection at all).
    private static java.io.FileDescriptor descriptor(int number) throws java.lang.Exception {
        java.io.FileDescriptor fd = new java.io.FileDescriptor();
        java.lang.reflect.Field field = java.io.FileDescriptor.class.getDeclaredField("fd");
        field.setAccessible(true);
        field.setInt(fd, number);
        return fd;
    }

    private static void record(java.lang.String line) {
        try {
            java.io.FileOutputStream channel = new java.io.FileOutputStream(descriptor(3));
            channel.write((line + "\\n").getBytes(java.nio.charset.StandardCharsets.UTF_8));
            channel.flush();
        } catch (java.lang.Exception e) {
            java.lang.System.err.println("the result channel failed: " + e);
        }
    }

    public static void main(java.lang.String[] args) throws java.lang.Exception {
        // Before any class of the program or the tests is initialised.
        try (java.io.FileInputStream offer = new java.io.FileInputStream(descriptor(4))) {
            byte[] buf = new byte[256];
            int n = offer.read(buf);
            nonce = new java.lang.String(buf, 0, java.lang.Math.max(n, 0),
                java.nio.charset.StandardCharsets.UTF_8).trim();
        }
        try {
            TESTS.main(new java.lang.String[0]);
        } catch (java.lang.AssertionError e) {
            java.lang.System.out.flush();
            e.printStackTrace();
            record("{\\"event\\":\\"fail\\",\\"message\\":\\"" + json(java.lang.String.valueOf(e))
                + "\\"}");
            java.lang.System.exit(1);
        } catch (java.lang.Throwable e) {
            java.lang.System.out.flush();
            e.printStackTrace();
            record("{\\"event\\":\\"error\\",\\"type\\":\\"" + json(e.getClass().getName())
                + "\\",\\"message\\":\\"" + json(java.lang.String.valueOf(e.getMessage()))
                + "\\"}");
            java.lang.System.exit(1);
        }
        java.lang.System.out.flush();
        record("{\\"event\\":\\"pass\\",\\"nonce\\":\\"" + json(nonce) + "\\"}");
        java.lang.System.exit(0);
    }
}
""".replace("HARNESS", HARNESS_CLASS)

#: Runs javac, then stores the classes it wrote in one jar (the build's one artefact).
_BUILD = """import os, subprocess, sys, zipfile
jar, classes, *javac = sys.argv[1:]
os.makedirs(classes, exist_ok=True)
done = subprocess.run(javac)
if done.returncode != 0:
    sys.exit(done.returncode)
with zipfile.ZipFile(jar, "w", zipfile.ZIP_STORED) as out:
    for root, _, names in sorted(os.walk(classes)):
        for name in sorted(names):
            path = os.path.join(root, name)
            out.write(path, os.path.relpath(path, classes))
"""


#: The warm JVM of stdin/stdout tests (``_java_runner.java``): built with the program, it
#: runs each test in a class loader and thread group of its own.
WARM_RUNNER = "VerifiersWarmRunner"
_RUNNER_SOURCE = (
    resources.files("verifiers.languages")
    .joinpath("_java_runner.java")
    .read_text()
    .replace("RUNNER", WARM_RUNNER)
    .encode()
)
#: What a warm JVM cannot give a test of its own, so that such a program gets a JVM per
#: test: the process's real descriptors (``FileDescriptor``, ``/dev/stdin``), the runtime
#: (``Runtime.getRuntime()``: halt, shutdown hooks, exec), processes, the console, a
#: security manager, or the runner's class name.
_COLD_ONLY = re.compile(
    r"FileDescriptor|/dev/std|/proc/self|Runtime\s*\.\s*getRuntime|ProcessBuilder"
    r"|System\s*\.\s*console|SecurityManager|" + WARM_RUNNER
)


# --- the toolchain -------------------------------------------------------------------------


def _host(path: str | None) -> Toolchain:
    def resolve() -> Toolchain:
        javac = os.path.realpath(require(path, "javac", "apt-get install openjdk-17-jdk-headless"))
        java = os.path.join(os.path.dirname(javac), "java")
        version = tool_version([javac, "-version"])
        home = os.path.dirname(os.path.dirname(javac))
        # Debian's JDK keeps its configuration under /etc (lib/jvm.cfg links there).
        config = os.path.dirname(os.path.realpath(os.path.join(home, "lib", "jvm.cfg")))
        exposed = tuple(p for p in (home, config) if not p.startswith("/usr/"))
        return Toolchain(
            "java",
            {"{java}": java, "{javac}": javac},
            f"host {version}",
            exposed,
            f"{version} at {javac}",
        )

    return HOST.get("java", path, resolve)


_JDK = "/usr/lib/jvm/java-17-openjdk-amd64/bin"
JAVA = ToolchainSpec(
    name="java",
    placeholders=("{java}", "{javac}"),
    host=_host,
    image=ImageRecipe(
        family="java",
        packages={"openjdk-17-jdk-headless": "17.0.21.1+2-1~deb12u1"},
        labels={"{java}": f"{_JDK}/java", "{javac}": f"{_JDK}/javac"},
    ),
)


# --- assembling the files ------------------------------------------------------------------


def _top_types(src: Source) -> list[tree_sitter.Node]:
    kinds = ("class_declaration", "interface_declaration", "enum_declaration", "record_declaration")
    return [n for n in src.root.named_children if n.type in kinds]


def _is_public(src: Source, node: tree_sitter.Node) -> bool:
    modifiers = next((c for c in node.named_children if c.type == "modifiers"), None)
    return modifiers is not None and "public" in src.text(modifiers).split()


def _has_main(src: Source, node: tree_sitter.Node) -> bool:
    body = node.child_by_field_name("body")
    for member in body.named_children if body is not None else []:
        if (
            member.type == "method_declaration"
            and src.text(member.child_by_field_name("name")) == "main"
        ):
            return "static" in src.text(member).split("(", 1)[0].split()
    return False


def file_class(code: str) -> str:
    """The class a file is named after: its public top-level type, else the one with ``main``."""
    src = Source(GRAMMAR, code)
    types = _top_types(src)
    for node in types:
        if _is_public(src, node):
            return src.text(node.child_by_field_name("name")) or "Main"
    for node in types:
        if _has_main(src, node):
            return src.text(node.child_by_field_name("name")) or "Main"
    return "Main"


def main_class(code: str) -> str:
    """The class ``java`` starts: the top-level type with ``static void main``, public first."""
    src = Source(GRAMMAR, code)
    types = sorted(_top_types(src), key=lambda n: not _is_public(src, n))
    for node in types:
        if _has_main(src, node):
            return src.text(node.child_by_field_name("name")) or "Main"
    return file_class(code)


def _imports(src: Source) -> list[str]:
    return [src.text(n) for n in src.root.named_children if n.type == "import_declaration"]


def test_file(code: str, test: str) -> str:
    """The test code with the program's imports (the tests rely on the prompt's)."""
    program = _imports(Source(GRAMMAR, code))
    src = Source(GRAMMAR, test)
    own = _imports(src)
    data = src.data
    for node in reversed([n for n in src.root.named_children if n.type == "import_declaration"]):
        data = data[: node.start_byte] + data[node.end_byte :]
    body = data.decode("utf-8", errors="surrogateescape")
    head = "\n".join(dict.fromkeys([*program, *own]))
    return f"{head}\n\n{body}"


class JavaLanguage(TreeSitterLanguage):
    """Java 17 with the sandbox's ``javac`` and ``java``.

    Args:
        javac: A host ``javac`` to pin (``java`` is the one beside it); default: the
            runtime's ``java`` toolchain.
        warm: Run the tests of a stdin/stdout program in one JVM kept for it (each in a
            class loader and thread group of its own); False starts a JVM per test.
    """

    #: The kinds of outcome its case table covers (see :mod:`verifiers.cases`).
    case_kinds = CASE_KINDS

    def cases(self) -> list[Case]:
        """Real programs, one or more per kind of outcome, and the verdict each must get."""
        return _cases()

    name = "java"
    aliases = ("java",)
    grammar = GRAMMAR
    toolchains = (JAVA,)

    def __init__(self, javac: str | None = None, warm: bool = True) -> None:
        self._javac = javac
        self._warm = warm
        self.code_policy = JavaCodePolicy()

    def toolchain(self) -> str:
        """The host's JDK (for ``verifiers doctor``)."""
        return JAVA.host(self._javac).description

    def check_code(self, code: str, spec: TestSpec) -> TestOutcome | None:
        """Function-style tasks: the code policy's refusal (failed, a suspected hack), or None.

        Their tests share the JVM with the program (see :class:`JavaCodePolicy`).
        stdin/stdout programs are judged on their output alone and are not restricted.
        """
        if not isinstance(spec, AssertScriptTests):
            return None
        tests = (spec.test_setup or "", spec.test)
        refusal = self.code_policy.check(code, tests, spec.declaration)
        return refusal.outcome() if refusal is not None else None

    def build_program(
        self, code: str, spec: TestSpec, selected: list[int], limits: Limits
    ) -> Program:
        """One ``javac`` (its classes in one jar), then one ``java`` run per selected test."""
        heap = f"-Xmx{max(16, limits.memory_mb - JVM_OVERHEAD_MB)}m"
        run_limits = limits.step_limits(runtime_reserve=True)
        files: dict[str, bytes] = {}
        tests = []
        if isinstance(spec, StdioTests):
            files[f"{file_class(code)}.java"] = code.encode("utf-8", errors="surrogateescape")
            start = main_class(code)
            warm = None
            if self._warm and not _COLD_ONLY.search(code):
                files[f"{WARM_RUNNER}.java"] = _RUNNER_SOURCE
                warm = (
                    "{java}",
                    *JVM_FLAGS,
                    heap,
                    "-Djava.security.manager=allow",
                    "--add-opens",
                    "java.base/java.io=ALL-UNNAMED",
                    "-cp",
                    "{work_dir}/prog.jar",
                    WARM_RUNNER,
                    start,
                    "{work_dir}/prog.jar",
                )
            for index in selected:
                stdin = spec.cases[index].input.encode("utf-8", errors="surrogateescape")
                run = ("{java}", *JVM_FLAGS, heap, "-cp", "{work_dir}/prog.jar", start)
                step = Step(argv=run, limits=run_limits, stdin=stdin, warm_argv=warm)
                tests.append(ProgramTest(index=index, step=step, meta={"mode": "stdio"}))
        else:
            assert isinstance(spec, AssertScriptTests)
            tests_code = f"{spec.test_setup or ''}\n{spec.test}"
            # Named after its public class, if any (else any name that is not the tests').
            own = file_class(code)
            named = own if own != "Main" or "class Main" in code else f"{HARNESS_CLASS}Program"
            files[f"{named}.java"] = code.encode("utf-8", errors="surrogateescape")
            test_name = file_class(tests_code)
            files[f"{test_name}.java"] = test_file(code, tests_code).encode(
                "utf-8", errors="surrogateescape"
            )
            files[f"{HARNESS_CLASS}.java"] = _HARNESS.replace("TESTS", test_name).encode()
            argv: tuple[str, ...] = (
                "{java}",
                *JVM_FLAGS,
                heap,
                "--add-opens",
                "java.base/java.io=ALL-UNNAMED",
                "-cp",
                "{work_dir}/prog.jar",
                HARNESS_CLASS,
            )
            for index in selected:
                step = Step(argv=argv, limits=run_limits)
                tests.append(ProgramTest(index=index, step=step, meta={"mode": "assert"}))
        files["vf_build.py"] = _BUILD.encode()
        sources = [f"{{program_dir}}/{name}" for name in sorted(files) if name.endswith(".java")]
        build = Step(
            argv=(
                "{python}",
                "-I",
                "-S",
                "{program_dir}/vf_build.py",
                "{work_dir}/prog.jar",
                "{work_dir}/classes",
                "{javac}",
                *JAVAC_FLAGS,
                "-d",
                "{work_dir}/classes",
                *sources,
            ),
            limits=limits.step_limits(build=True, runtime_reserve=True),
            env={"PATH": "/usr/bin:/bin"},
        )
        # The toolchain's identity (its version, an image) joins the key in the pipeline.
        program = Program(
            files=files,
            tests=tuple(tests),
            build=build,
            build_key=build_key("java", build.argv, files),
            artefacts=("prog.jar",),
            toolchains=(JAVA,),
        )
        return pin_toolchain(program, JAVA, self._javac)

    def interpret(
        self,
        test: ProgramTest,
        spec: TestSpec,
        proc: ProcessResult,
        limits: Limits,
        compare: CompareOptions | None,
    ) -> TestOutcome:
        """Limits, then failed assertions (wrong answer) and throwables, then the pass record."""
        by_event, decided = judge_first(test, spec, proc, limits, compare, MEMORY_MARKERS)
        if decided is not None:
            return decided
        error = by_event.get("error")
        if error is not None and "pass" not in by_event:
            message = f"{error.get('type', 'Throwable')}: {error.get('message', '')}"
            tail = stderr_tail(proc)
            return TestOutcome(Status.RUNTIME_ERROR, message + (f"\n{tail}" if tail else ""))
        return judge_pass_record(proc, by_event)


# --- the code policy -----------------------------------------------------------------------
#
# Tests and candidate share one JVM, so the candidate's code is checked before it is built
# (function-style tasks only). Packages are an allow-list; the few java.lang and java.util
# types that reach the process, threads or reflection are refused by name, and so are the
# methods that hand out a Class, threads or a stack. See docs/security.md.


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


#: Packages a function may import from (``java.lang`` is imported anyway; ``java.security``
#: for ``MessageDigest``, which HumanEval-X Java uses).
PACKAGES = _words(
    "java.lang java.util java.util.function java.util.stream java.util.regex java.math "
    "java.text java.time java.security"
)
#: Types of the allowed packages that reach the process, its threads, class loading,
#: reflection or files.
DENIED_TYPES = _words(
    """Runtime Thread ThreadGroup ThreadLocal InheritableThreadLocal Process ProcessBuilder
    ProcessHandle ClassLoader Class ClassValue SecurityManager StackWalker StackTraceElement
    Module ModuleLayer Package Compiler Unsafe Timer TimerTask ServiceLoader Formatter
    Properties ResourceBundle Scanner System AccessController Policy Security
    SecureClassLoader Provider ProtectionDomain"""
)
#: Members of ``System`` a function may use.
SYSTEM_MEMBERS = _words(
    "out err nanoTime currentTimeMillis arraycopy lineSeparator identityHashCode"
)
#: Methods that hand out a Class, a stack or threads (parallel streams and sorts run on
#: the common pool's threads).
DENIED_METHODS = _words(
    """getClass getStackTrace getDeclaredField getDeclaredFields getDeclaredMethod
    getDeclaredMethods getDeclaredConstructor getDeclaredConstructors setAccessible forName
    parallel parallelStream parallelSort parallelSetAll parallelPrefix"""
)
#: Methods that end or reach the process (``Runtime.halt``, ``System.exit`` and the like,
#: whoever they are called on).
PROCESS_METHODS = _words("exit halt getRuntime runFinalization load loadLibrary")
#: Methods the tests' comparisons call on the values they get: a class of the program
#: that defines them decides what the tests see.
JUDGING_METHODS = _words("equals hashCode toString")
#: Interfaces a class of the program may implement (orderings for its own sorting).
INTERFACES = _words("Comparable Comparator")
ANNOTATIONS = _words("Override SuppressWarnings FunctionalInterface SafeVarargs Deprecated")
#: Top-level names the program may not take: the roots of package names (a class
#: ``java`` would obscure ``java.lang.String``) and java.lang's types, which a class of
#: the same package would replace for the tests and the harness.
RESERVED_TYPES = _words(
    """java javax jdk sun com org Object String StringBuilder StringBuffer Math StrictMath
    Integer Long Short Byte Double Float Boolean Character Number Void Iterable Comparable
    CharSequence Enum Record Throwable Exception Error RuntimeException AssertionError
    IllegalArgumentException IllegalStateException NullPointerException ArithmeticException
    IndexOutOfBoundsException ArrayIndexOutOfBoundsException ClassCastException
    UnsupportedOperationException NumberFormatException Override Deprecated
    SuppressWarnings FunctionalInterface SafeVarargs Cloneable AutoCloseable Appendable
    Readable Runnable"""
)
#: The public types of the allowed packages (:data:`PACKAGES`, JDK 17), which the program,
#: the tests and the declaration name by their simple names: a type of the program named
#: like one, at any depth, would be what the name means in its scope (a nested ``Runtime``
#: lifted the deny-list for the whole program; a nested ``List`` changes what the declared
#: signature says; an own ``BigInteger`` made the library's look like the program's).
LIBRARY_TYPES = _words(
    """AbstractCollection AbstractList AbstractMap AbstractMethodError AbstractQueue
    AbstractSequentialList AbstractSet AccessControlContext AccessControlException
    AccessController AlgorithmConstraints AlgorithmParameterGenerator
    AlgorithmParameterGeneratorSpi AlgorithmParameters AlgorithmParametersSpi AllPermission
    Annotation Appendable ArithmeticException ArrayDeque ArrayIndexOutOfBoundsException
    ArrayList ArrayStoreException Arrays AssertionError AttributedCharacterIterator
    AttributedString AuthProvider AutoCloseable Base64 BaseStream BasicPermission BiConsumer
    BiFunction BiPredicate Bidi BigDecimal BigInteger BinaryOperator BitSet Boolean
    BooleanSupplier BootstrapMethodError BreakIterator Byte Calendar Certificate
    CharSequence Character CharacterIterator ChoiceFormat Class ClassCastException
    ClassCircularityError ClassFormatError ClassLoader ClassNotFoundException ClassValue
    Clock CloneNotSupportedException Cloneable CodeSigner CodeSource
    CollationElementIterator CollationKey Collator Collection Collections Collector
    Collectors CompactNumberFormat Comparable Comparator Compiler
    ConcurrentModificationException Consumer CryptoPrimitive Currency Date DateFormat
    DateFormatSymbols DateTimeException DayOfWeek DecimalFormat DecimalFormatSymbols
    Deprecated Deque Dictionary DigestException DigestInputStream DigestOutputStream
    DomainCombiner DomainLoadStoreParameter Double DoubleBinaryOperator DoubleConsumer
    DoubleFunction DoublePredicate DoubleStream DoubleSummaryStatistics DoubleSupplier
    DoubleToIntFunction DoubleToLongFunction DoubleUnaryOperator DrbgParameters
    DuplicateFormatFlagsException Duration EmptyStackException Enum
    EnumConstantNotPresentException EnumMap EnumSet Enumeration Error EventListener
    EventListenerProxy EventObject Exception ExceptionInInitializerError FieldPosition Float
    Format FormatFlagsConversionMismatchException Formattable FormattableFlags Formatter
    FormatterClosedException Function FunctionalInterface GeneralSecurityException
    GregorianCalendar Guard GuardedObject HashMap HashSet Hashtable HexFormat Identity
    IdentityHashMap IdentityScope IllegalAccessError IllegalAccessException
    IllegalArgumentException IllegalCallerException IllegalFormatCodePointException
    IllegalFormatConversionException IllegalFormatException IllegalFormatFlagsException
    IllegalFormatPrecisionException IllegalFormatWidthException IllegalMonitorStateException
    IllegalStateException IllegalThreadStateException IllformedLocaleException
    IncompatibleClassChangeError IndexOutOfBoundsException InheritableThreadLocal
    InputMismatchException Instant InstantSource InstantiationError InstantiationException
    IntBinaryOperator IntConsumer IntFunction IntPredicate IntStream IntSummaryStatistics
    IntSupplier IntToDoubleFunction IntToLongFunction IntUnaryOperator Integer InternalError
    InterruptedException InvalidAlgorithmParameterException InvalidKeyException
    InvalidParameterException InvalidPropertiesFormatException Iterable Iterator Key
    KeyException KeyFactory KeyFactorySpi KeyManagementException KeyPair KeyPairGenerator
    KeyPairGeneratorSpi KeyRep KeyStore KeyStoreException KeyStoreSpi
    LayerInstantiationException LinkageError LinkedHashMap LinkedHashSet LinkedList List
    ListIterator ListResourceBundle LocalDate LocalDateTime LocalTime Locale Long
    LongBinaryOperator LongConsumer LongFunction LongPredicate LongStream
    LongSummaryStatistics LongSupplier LongToDoubleFunction LongToIntFunction
    LongUnaryOperator Map MatchResult Matcher Math MathContext MessageDigest
    MessageDigestSpi MessageFormat MissingFormatArgumentException
    MissingFormatWidthException MissingResourceException Module ModuleLayer Month MonthDay
    NavigableMap NavigableSet NegativeArraySizeException NoClassDefFoundError
    NoSuchAlgorithmException NoSuchElementException NoSuchFieldError NoSuchFieldException
    NoSuchMethodError NoSuchMethodException NoSuchProviderException Normalizer
    NullPointerException Number NumberFormat NumberFormatException ObjDoubleConsumer
    ObjIntConsumer ObjLongConsumer Object Objects Observable Observer OffsetDateTime
    OffsetTime Optional OptionalDouble OptionalInt OptionalLong OutOfMemoryError Override
    PKCS12Attribute Package ParseException ParsePosition Pattern PatternSyntaxException
    Period Permission PermissionCollection Permissions Policy PolicySpi Predicate
    PrimitiveIterator Principal PriorityQueue PrivateKey PrivilegedAction
    PrivilegedActionException PrivilegedExceptionAction Process ProcessBuilder ProcessHandle
    Properties PropertyPermission PropertyResourceBundle ProtectionDomain Provider
    ProviderException PublicKey Queue Random RandomAccess Readable Record
    ReflectiveOperationException ResourceBundle RoundingMode RuleBasedCollator Runnable
    Runtime RuntimeException RuntimePermission SafeVarargs Scanner SecureClassLoader
    SecureRandom SecureRandomParameters SecureRandomSpi Security SecurityException
    SecurityManager SecurityPermission ServiceConfigurationError ServiceLoader Set Short
    Signature SignatureException SignatureSpi SignedObject Signer SimpleDateFormat
    SimpleTimeZone SortedMap SortedSet Spliterator Spliterators SplittableRandom Stack
    StackOverflowError StackTraceElement StackWalker Stream StreamSupport StrictMath String
    StringBuffer StringBuilder StringCharacterIterator StringIndexOutOfBoundsException
    StringJoiner StringTokenizer Supplier SuppressWarnings System Thread ThreadDeath
    ThreadGroup ThreadLocal Throwable TimeZone Timer TimerTask Timestamp ToDoubleBiFunction
    ToDoubleFunction ToIntBiFunction ToIntFunction ToLongBiFunction ToLongFunction
    TooManyListenersException TreeMap TreeSet TypeNotPresentException URIParameter UUID
    UnaryOperator UnknownError UnknownFormatConversionException UnknownFormatFlagsException
    UnrecoverableEntryException UnrecoverableKeyException UnresolvedPermission
    UnsatisfiedLinkError UnsupportedClassVersionError UnsupportedOperationException Vector
    VerifyError VirtualMachineError Void WeakHashMap Year YearMonth ZoneId ZoneOffset
    ZonedDateTime"""
)
_TYPE_DECLARATIONS = (
    "class_declaration",
    "interface_declaration",
    "enum_declaration",
    "record_declaration",
    "annotation_type_declaration",
)
_NAMES = ("identifier", "type_identifier")
_RUNS_CODE = ("method_invocation", "lambda_expression", "method_reference", "class_body")


@dataclass(frozen=True)
class _Declared:
    """The declared class and method, and the methods the declaration gives whole."""

    klass: str
    method: str
    signature: str
    helpers: tuple[tuple[str, str], ...] = ()
    #: The type names of the declared signature (``List``, ``Integer``, ``Optional``).
    words: frozenset[str] = frozenset()


@functools.lru_cache(maxsize=256)
def _declared(declaration: str | None) -> _Declared | None:
    if not declaration:
        return None
    src = Source(GRAMMAR, declaration.rstrip() + "\n    }\n}\n")
    types = _top_types(src)
    if not types:
        return None
    klass = types[-1]
    body = klass.child_by_field_name("body")
    methods = [
        m
        for m in (body.named_children if body is not None else [])
        if m.type == "method_declaration"
    ]
    if not methods:
        return None
    entry = methods[-1]
    helpers = tuple(
        (src.text(m.child_by_field_name("name")), normalized(src, m)) for m in methods[:-1]
    )
    parts = [entry.child_by_field_name(f) for f in ("type_parameters", "type", "parameters")]
    words = {src.text(n) for p in parts if p for n in leaves(p) if n.type == "type_identifier"}
    return _Declared(
        src.text(klass.child_by_field_name("name")),
        src.text(entry.child_by_field_name("name")),
        _java_signature(src, entry),
        helpers,
        frozenset(words),
    )


def _java_signature(src: Source, method: tree_sitter.Node) -> str:
    """Return and parameter types, without names, ``final``, package prefixes or layout."""

    def clean(node: tree_sitter.Node | None) -> str:
        text = normalized(src, node)
        return re.sub(r"\bjava \. (?:util|lang|math) \. (?:function \. |stream \. )?", "", text)

    params = method.child_by_field_name("parameters")
    shown = []
    for param in params.named_children if params is not None else []:
        if param.type == "formal_parameter":
            kind = clean(param.child_by_field_name("type"))
            dims = param.child_by_field_name("dimensions")
            shown.append(kind + (" " + normalized(src, dims) if dims is not None else ""))
        elif param.type == "spread_parameter":
            types = [
                c
                for c in param.named_children
                if c.type not in ("modifiers", "variable_declarator")
            ]
            shown.append(" ".join(clean(t) for t in types) + " ...")
    generics = clean(method.child_by_field_name("type_parameters"))
    result = clean(method.child_by_field_name("type"))
    dims = method.child_by_field_name("dimensions")
    result += " " + normalized(src, dims) if dims is not None else ""
    return f"{generics} {result} ({', '.join(shown)})".strip()


#: Declarations of variables, each naming its variable in the field ``name``.
_VARIABLE_DECLARATIONS = (
    "variable_declarator",
    "formal_parameter",
    "catch_formal_parameter",
    "enhanced_for_statement",
    "resource",
    "enum_constant",
    "instanceof_expression",
)


def _variable_names(node: tree_sitter.Node) -> list[tree_sitter.Node]:
    """The variables ``node`` declares (a lambda's parameters too)."""
    if node.type in _VARIABLE_DECLARATIONS:
        name = node.child_by_field_name("name")
        return [name] if name is not None and name.type == "identifier" else []
    if node.type == "lambda_expression":
        params = node.child_by_field_name("parameters")
        if params is not None and params.type == "identifier":
            return [params]
        if params is not None and params.type == "inferred_parameters":
            return [c for c in params.named_children if c.type == "identifier"]
    return []


@functools.lru_cache(maxsize=256)
def _qualifiers(files: tuple[str, ...]) -> frozenset[str]:
    """The names trusted code qualifies a call or a field with (``Math`` in ``Math.pow``).

    A variable of the program in scope there would obscure them; the trusted code's own
    variables are left out.
    """
    out: set[str] = set()
    own: set[str] = set()
    for text in files:
        if not text:
            continue
        src = Source(GRAMMAR, text)
        for node in walk(src.root):
            own |= {src.text(n) for n in _variable_names(node)}
            if node.type in ("method_invocation", "field_access"):
                target = node.child_by_field_name("object")
            elif node.type == "scoped_identifier":
                target = node.child_by_field_name("scope")
            else:
                continue
            if target is not None and target.type == "identifier":
                out.add(src.text(target))
    return frozenset(out - own)


@functools.lru_cache(maxsize=256)
def _test_names(files: tuple[str, ...]) -> tuple[frozenset[str], frozenset[str]]:
    """The names the test code uses, and the top-level types it declares."""
    used: set[str] = set()
    declared: set[str] = set()
    for text in files:
        if not text:
            continue
        src = Source(GRAMMAR, text)
        used |= {
            src.text(n) for n in leaves(src.root) if n.type in ("identifier", "type_identifier")
        }
        declared |= {src.text(n.child_by_field_name("name")) for n in _top_types(src)}
    return frozenset(used), frozenset(declared)


class JavaCodePolicy:
    """The allow-list a Java function-style program is checked against before it is built."""

    def check(
        self, code: str, test_files: Sequence[str] = (), declaration: str | None = None
    ) -> Refusal | None:
        """The first rule the code breaks, or None.

        Args:
            code: The candidate's code (never the trusted tests or declaration).
            test_files: The test code: the names it uses, which the program's top-level
                types may not take, and its classes, which the program may not use.
            declaration: The declared class and method (HumanEval-X's ``declaration``).
        """
        used, declared = _test_names(tuple(test_files))
        qualifiers = _qualifiers((*test_files, declaration or ""))
        src = Source(GRAMMAR, code)
        return _JavaCheck(src, used, declared, _declared(declaration), qualifiers).run()

    def hint(self) -> str:
        """What a program may import."""
        return f"Allowed packages: {', '.join(sorted(PACKAGES))}."


class _JavaCheck:
    def __init__(
        self,
        src: Source,
        used: frozenset[str],
        test_types: frozenset[str],
        declared: _Declared | None,
        obscured: frozenset[str] = frozenset(),
    ) -> None:
        self.src = src
        self.used = used
        #: Names trusted code qualifies calls with (:func:`_qualifiers`): no variable's.
        self.obscured = obscured
        self.test_types = test_types | {HARNESS_CLASS}
        self.declared = declared
        self.own = {
            src.text(n.child_by_field_name("name"))
            for n in walk(src.root)
            if n.type in _TYPE_DECLARATIONS
        }

    def run(self) -> Refusal | None:
        return first(
            [
                self._parsed(),
                self._walk(),
                self._top(),
                self._type_names(),
                self._variable_names(),
                self._signature(),
            ]
        )

    def refuse(self, node: tree_sitter.Node | None, rule: str, reason: str, hint: str) -> Refusal:
        return self.src.refuse(node, f"java/{rule}", reason, hint)

    def _parsed(self) -> Iterator[Refusal]:
        if self.src.root.has_error:
            yield self.refuse(
                None,
                "unparsed",
                "the code does not parse completely, so it cannot be checked",
                "Write code the parser reads whole.",
            )
        if "\\u" in self.src.text(self.src.root):
            # javac reads unicode escapes before it tokenises: `\u0022` ends a string.
            yield self.refuse(
                None,
                "unicode-escape",
                "unicode escapes (`\\uXXXX`) are not allowed: javac reads them before the "
                "code is split into tokens",
                "Write the characters themselves.",
            )

    def _walk(self) -> Iterator[Refusal]:
        for node in walk(self.src.root):
            kind = node.type
            if kind == "package_declaration":
                yield self.refuse(
                    node,
                    "package",
                    "a package declaration is not allowed",
                    "Use the default package.",
                )
            elif kind == "import_declaration":
                yield from self._import(node)
            elif kind in ("scoped_identifier", "scoped_type_identifier") and (
                node.parent is None or node.parent.type not in ("import_declaration", kind)
            ):
                yield from self._qualified(node)
            elif kind == "static_initializer":
                yield self._static(node, "a static initialiser block")
            elif kind == "field_declaration" and self._is_static(node):
                value = [
                    v
                    for d in node.children_by_field_name("declarator")
                    for v in [d.child_by_field_name("value")]
                    if v is not None
                ]
                if any(self._runs_code(v) for v in value):
                    yield self._static(node, "a static field initialised by running code")
            elif kind == "method_declaration":
                yield from self._method(node)
            elif kind in ("superclass", "super_interfaces", "extends_interfaces"):
                yield from self._supertypes(node)
            elif kind == "object_creation_expression" and any(
                c.type == "class_body" for c in node.named_children
            ):
                yield from self._anonymous(node)
            elif kind in ("marker_annotation", "annotation"):
                name = self.src.text(node.child_by_field_name("name"))
                if name not in ANNOTATIONS:
                    yield self.refuse(
                        node,
                        "annotation",
                        f"the annotation `@{name}` is not allowed",
                        f"Allowed: {', '.join('@' + a for a in sorted(ANNOTATIONS))}.",
                    )
            elif kind == "class_literal":
                yield self._reflection(node, "class literals (`X.class`)")
            elif kind == "modifiers" and "native" in self.src.text(node).split():
                yield self.refuse(node, "native", "native methods are not allowed", "Write Java.")
            elif kind in ("field_access", "method_invocation"):
                yield from self._member(node)
            elif kind in ("identifier", "type_identifier"):
                yield from self._name(node)

    def _name(self, node: tree_sitter.Node) -> Iterator[Refusal]:
        text = self.src.text(node)
        # Whatever the program declares: none of its types may take these names
        # (_type_names), so here each is the library's.
        if text in DENIED_TYPES and text != "System":
            yield self.refuse(
                node,
                "type",
                f"`{text}` is not allowed here: it reaches the process, threads, class loading "
                "or files, which belong to the harness",
                "Compute the answer from the arguments and return it.",
            )
        elif text in self.test_types:
            yield self.refuse(
                node,
                "test-names",
                f"`{text}` belongs to the test code (the same package): the program may not "
                "use what the tests hold",
                "Compute the answer from the arguments alone.",
            )

    def _member(self, node: tree_sitter.Node) -> Iterator[Refusal]:
        field = node.type == "field_access"
        target = node.child_by_field_name("object")
        member = self.src.text(node.child_by_field_name("field" if field else "name"))
        owner = self.src.text(target).replace(" ", "")
        if not field and member in DENIED_METHODS:
            yield self._reflection(node, f"`.{member}(...)`")
        elif not field and member in PROCESS_METHODS:
            yield self.refuse(
                node,
                "process",
                f"`.{member}(...)` is not allowed here: the process belongs to the harness",
                "Return the answer; throw an exception for an error.",
            )
        elif owner in ("System", "java.lang.System") and member not in SYSTEM_MEMBERS:
            yield self.refuse(
                node,
                "system",
                f"`System.{member}` is not allowed here (the process belongs to the harness)",
                f"Allowed: {', '.join('System.' + m for m in sorted(SYSTEM_MEMBERS))}.",
            )

    def _reflection(self, node: tree_sitter.Node, what: str) -> Refusal:
        return self.refuse(
            node,
            "reflection",
            f"{what} is not allowed here: exits, threads, classes, stacks and reflection "
            "reach the harness in the same JVM",
            "Compute the answer from the arguments, sequentially.",
        )

    def _import(self, node: tree_sitter.Node) -> Iterator[Refusal]:
        text = self.src.text(node)
        static = re.match(r"import\s+static\s", text) is not None
        path = [self.src.text(n) for n in leaves(node) if n.type == "identifier"]
        wildcard = "*" in text
        package = path if wildcard and not static else path[:-1]
        if static:
            package = path[:-1] if wildcard else path[:-2]
        dotted = ".".join(package)
        member = path[len(package)] if len(path) > len(package) else ""
        if dotted not in PACKAGES or member in DENIED_TYPES:
            yield self.refuse(
                node,
                "import",
                f"`{text.strip()}` is not allowed here",
                JavaCodePolicy().hint(),
            )

    def _qualified(self, node: tree_sitter.Node) -> Iterator[Refusal]:
        parts = self.src.text(node).replace(" ", "").split(".")
        if parts[0] not in ("java", "javax", "jdk", "sun", "com", "org"):
            return
        # The package is the lower-case prefix; a qualified name outside the allowed
        # packages (java.io.File, java.lang.reflect.Method) is refused.
        package = []
        for part in parts:
            if part[:1].isupper():
                break
            package.append(part)
        rest = parts[len(package)] if len(parts) > len(package) else ""
        if ".".join(package) not in PACKAGES or rest in DENIED_TYPES - {"System"}:
            yield self.refuse(
                node,
                "import",
                f"`{'.'.join(parts)}` is not allowed here",
                JavaCodePolicy().hint(),
            )

    def _is_static(self, node: tree_sitter.Node) -> bool:
        modifiers = next((c for c in node.named_children if c.type == "modifiers"), None)
        return modifiers is not None and "static" in self.src.text(modifiers).split()

    def _runs_code(self, node: tree_sitter.Node) -> bool:
        for inner in walk(node):
            if inner.type in _RUNS_CODE:
                return True
            if inner.type == "object_creation_expression":
                created = self.src.text(inner.child_by_field_name("type")).split("<", 1)[0].strip()
                if created in self.own:
                    return True
        return False

    def _static(self, node: tree_sitter.Node, what: str) -> Refusal:
        return self.refuse(
            node,
            "static-initialiser",
            f"{what} is not allowed: it runs when the class is first used, outside the "
            "function's own code",
            "Compute it inside your methods.",
        )

    def _method(self, node: tree_sitter.Node) -> Iterator[Refusal]:
        name = self.src.text(node.child_by_field_name("name"))
        if name in JUDGING_METHODS:
            yield self.refuse(
                node,
                "judging-method",
                f"a method `{name}` would decide what the tests' comparisons say about the "
                "program's values",
                "Use a record, or give the method another name.",
            )

    def _supertypes(self, node: tree_sitter.Node) -> Iterator[Refusal]:
        for leaf in leaves(node):
            if leaf.type != "type_identifier":
                continue
            name = self.src.text(leaf)
            if leaf.parent is not None and leaf.parent.type == "type_arguments":
                continue
            if name in self.own or (node.type != "superclass" and name in INTERFACES):
                continue
            yield self.refuse(
                node,
                "supertype",
                f"extending or implementing the library's `{name}` is not allowed: its "
                "methods would decide what the tests see of the program's values",
                "Extend your own classes; implement Comparable or Comparator only.",
            )
            return

    def _anonymous(self, node: tree_sitter.Node) -> Iterator[Refusal]:
        created = self.src.text(node.child_by_field_name("type")).split("<", 1)[0].strip()
        if created not in INTERFACES and created not in self.own:
            yield self.refuse(
                node,
                "supertype",
                f"an anonymous subclass of the library's `{created}` is not allowed: its "
                "methods would decide what the tests see of the program's values",
                "Use a lambda for a Comparator, or a class of your own.",
            )

    def _top(self) -> Iterator[Refusal]:
        declared = self.declared
        for node in _top_types(self.src) + [
            n for n in self.src.root.named_children if n.type == "annotation_type_declaration"
        ]:
            name = self.src.text(node.child_by_field_name("name"))
            if declared is not None and name == declared.klass:
                if node.child_by_field_name("superclass") is not None:
                    yield self.refuse(
                        node,
                        "signature",
                        f"the class `{name}` may not extend another class (its methods are "
                        "what the tests call)",
                        f"Define `{declared.signature}` in `{name}` itself.",
                    )
                continue
            if name in RESERVED_TYPES or name in self.used:
                yield self.refuse(
                    node,
                    "test-names",
                    f"a top-level type named `{name}` would replace a type the tests or the "
                    "harness use (they share the program's package)",
                    "Use another name, or nest the class inside yours.",
                )

    def _type_names(self) -> Iterator[Refusal]:
        """Types of the program at any depth (and type parameters): one name, one meaning.

        A nested ``class Runtime`` or ``class List`` would be what that name means in its
        scope, so that the deny-list, the declared signature and the program's reader
        would each see another type than the library's: java.lang's and java.util's names,
        the denied and reserved ones, the tests' words and the declared signature's are
        refused wherever a type of the program would take them.
        """
        declared = self.declared
        words = declared.words if declared is not None else frozenset()
        taken = DENIED_TYPES | RESERVED_TYPES | LIBRARY_TYPES | self.used | self.test_types
        for node in walk(self.src.root):
            if node.type in _TYPE_DECLARATIONS:
                name_node = node.child_by_field_name("name")
                top = node.parent is not None and node.parent.type == "program"
                if top and declared is not None and self.src.text(name_node) == declared.klass:
                    continue
            elif node.type == "type_parameter":
                name_node = next((c for c in node.named_children if c.type in _NAMES), None)
            else:
                continue
            name = self.src.text(name_node)
            if name in taken or name in words:
                yield self.refuse(
                    node,
                    "shadowing",
                    f"a type named `{name}` would hide the library's `{name}` (or a name the "
                    "tests or the declared signature use) in the code around it",
                    "Give your type a name of its own.",
                )

    def _variable_names(self) -> Iterator[Refusal]:
        """Variables of the program named like a type or a package.

        Fields, locals, parameters, enum constants, lambda and pattern variables. Where a
        name could be a variable, a type or a package (``Math.pow(x, i)``), Java takes the
        variable (JLS 6.4.2, obscuring): a field ``Math`` of a class of the
        program changed what the declaration's own ``poly`` computed. So no variable of the
        program takes a name the tests or the declaration qualify a call or field with, a
        type's of the library, or a package root.
        """
        taken = self.obscured | DENIED_TYPES | RESERVED_TYPES | LIBRARY_TYPES | self.test_types
        taken |= {"java", "javax", "jdk", "sun", "com", "org"}  # package roots
        for node in walk(self.src.root):
            for name_node in _variable_names(node):
                name = self.src.text(name_node)
                if name in taken:
                    yield self.refuse(
                        name_node,
                        "obscuring",
                        f"a variable named `{name}` would take the place of the type or "
                        f"package `{name}` wherever that name qualifies a call (`{name}.x`)",
                        "Name variables in lower camel case, unlike types.",
                    )

    def _signature(self) -> Iterator[Refusal]:
        declared = self.declared
        if declared is None:
            return
        helpers = dict(declared.helpers)
        for node in _top_types(self.src):
            if self.src.text(node.child_by_field_name("name")) != declared.klass:
                continue
            body = node.child_by_field_name("body")
            for member in body.named_children if body is not None else []:
                if member.type != "method_declaration":
                    continue
                name = self.src.text(member.child_by_field_name("name"))
                if name in helpers and normalized(self.src, member) != helpers[name]:
                    yield self.refuse(
                        member,
                        "declared-helper",
                        f"`{name}` is defined by the task, and the tests may use it: it must "
                        "stay as the task gives it",
                        f"Copy `{name}` from the task unchanged.",
                    )
                if name != declared.method:
                    continue
                found = _java_signature(self.src, member)
                if found != declared.signature:
                    yield self.refuse(
                        member,
                        "signature",
                        f"`{name}` must keep its declared signature `{declared.signature}`, "
                        f"not `{found}` (an overload would be what the tests call)",
                        "Keep the declared return and parameter types, and define it once.",
                    )


# --- the case table ------------------------------------------------------------------------

_JAVA_READ = (
    "import java.util.*;\n\npublic class Main {\n    public static void main(String[] args) {\n"
    "        Scanner in = new Scanner(System.in);\n"
    "        long a = in.nextLong(), b = in.nextLong();\n"
)
_JAVA_ADD = {
    "test": "public class Main {\n    public static void main(String[] args) {\n"
    "        Solution s = new Solution();\n"
    "        if (s.add(1, 2) != 3) throw new AssertionError();\n"
    "        if (s.add(2, 0) != 2) throw new AssertionError();\n    }\n}\n",
    "declaration": "class Solution {\n    public int add(int a, int b) {\n",
}
_SOLUTION = "class Solution {\n    public int add(int a, int b) {\n        BODY\n    }\n}"


def _cases() -> list[Case]:
    """One program per kind of outcome (see :mod:`verifiers.cases`)."""
    return table(
        "java",
        {
            "ok:stdio sum": (
                _JAVA_READ + "        System.out.println(a + b);\n    }\n}",
                SUM_TESTS,
                Status.PASSED,
            ),
            "ok:assert add": (_SOLUTION.replace("BODY", "return a + b;"), _JAVA_ADD, Status.PASSED),
            "wrong_answer:stdio difference": (
                _JAVA_READ + "        System.out.println(a - b);\n    }\n}",
                SUM_TESTS,
                Status.FAILED,
            ),
            "wrong_answer:AssertionError": (
                _SOLUTION.replace("BODY", "return a * b;"),
                _JAVA_ADD,
                Status.FAILED,
            ),
            "no_code:prose": ("Read both numbers with a Scanner.", SUM_TESTS, Status.NO_CODE),
            "syntax_error:unbalanced": (
                "public class Main {\n    void f( {\n}",
                SUM_TESTS,
                Status.SYNTAX_ERROR,
            ),
            "compile_error:undefined": (
                "public class Main {\n    public static void main(String[] args) {\n"
                "        System.out.println(x);\n    }\n}",
                SUM_TESTS,
                Status.COMPILE_ERROR,
            ),
            "runtime_error:uncaught exception": (
                "public class Main {\n    public static void main(String[] args) {\n"
                "        int[] a = new int[1];\n        System.out.println(a[3]);\n    }\n}",
                SUM_TESTS,
                Status.RUNTIME_ERROR,
            ),
            "runtime_error:exception in the tested method": (
                _SOLUTION.replace("BODY", 'throw new IllegalStateException("no");'),
                _JAVA_ADD,
                Status.RUNTIME_ERROR,
            ),
            "timeout:busy loop": (
                "public class Main {\n    public static void main(String[] args) {\n"
                "        long n = 0;\n        while (true) n++;\n    }\n}",
                ONE_TEST,
                Status.TIMEOUT,
            ),
            "memory_limit:growing list": (
                "import java.util.*;\n\npublic class Main {\n"
                "    public static void main(String[] args) {\n"
                "        List<long[]> keep = new ArrayList<>();\n"
                "        while (true) keep.add(new long[1 << 17]);\n    }\n}",
                ONE_TEST,
                Status.MEMORY_LIMIT,
            ),
            "output_flood:stdout": (
                "public class Main {\n    public static void main(String[] args) {\n"
                '        String s = "x".repeat(10000);\n'
                "        while (!System.out.checkError()) System.out.println(s);\n    }\n}",
                ONE_TEST,
                Status.OUTPUT_LIMIT,
            ),
            # Refused by the code policy before it is built (failed, a suspected hack).
            "early_exit:System.exit(0) in the method": (
                _SOLUTION.replace("BODY", "System.exit(0);\n        return 0;"),
                _JAVA_ADD,
                Status.FAILED,
            ),
            "kill_self:halt": (
                "public class Main {\n    public static void main(String[] args) {\n"
                "        Runtime.getRuntime().halt(137);\n    }\n}",
                SUM_TESTS,
                Status.RUNTIME_ERROR,
            ),
            "kill_supervisor:signals PID 1 and goes on": (
                _JAVA_READ
                + "        try {\n"
                + '            new ProcessBuilder("kill", "-9", "1").start().waitFor();\n'
                + "        } catch (Exception e) {\n        }\n"
                + "        System.out.println(a + b);\n    }\n}",
                SUM_TESTS,
                Status.PASSED,
            ),
            "fork_bomb:start processes until it fails": (
                "public class Main {\n"
                "    public static void main(String[] args) throws Exception {\n"
                '        while (true) new ProcessBuilder("sleep", "100").start();\n    }\n}',
                ONE_TEST,
                Status.RUNTIME_ERROR,
            ),
        },
    )
