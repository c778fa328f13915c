"""What the call channel keeps working for honest tests (Python and JavaScript), on real sandboxes.

The judge process holds the tests and reaches the program's functions through a channel of
plain data, so everything a test does with what the program gives it crosses that channel:
arguments changed in place, exceptions, generators, callbacks into the tests, LeetCode's
``class Solution``, objects of the program's classes, and every kind of value. Each feature
is a task with a right program, which must pass, and a wrong one, which must fail (so the
check can fail). The canonical solutions of HumanEval, MBPP, LeetCode (``tests/test_datasets.py``)
and HumanEval-X (``tests/languages/test_humaneval_x.py``) are checked where they live.
"""

from __future__ import annotations

from typing import Any

import pytest

import verifiers
from verifiers import Status
from verifiers.runtimes import LocalRuntime


def mbpp(*asserts: str, imports: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"test_list": list(asserts), "test_imports": list(imports)}


def check(body: str, entry_point: str, head: str = "") -> dict[str, Any]:
    lines = "".join(f"    {line}\n" for line in body.strip("\n").split("\n"))
    return {"test": f"{head}def check(candidate):\n{lines}", "entry_point": entry_point}


# name -> (right program, wrong program, tests)
PYTHON: dict[str, tuple[str, str, Any]] = {
    # --- arguments the program changes in place ---
    "a list sorted in place": (
        "def sort_in_place(xs):\n    xs.sort()\n",
        "def sort_in_place(xs):\n    xs = sorted(xs)\n",
        mbpp("xs = [3, 1, 2]\nsort_in_place(xs)\nassert xs == [1, 2, 3]"),
    ),
    "a dict and a set filled in place, the same objects after": (
        "def fill(d, s):\n    d['k'] = 1\n    s.add(2)\n",
        "def fill(d, s):\n    d = {'k': 1}\n",
        check(
            "d, s = {}, set()\nkeep = (d, s)\nassert candidate(d, s) is None\n"
            "assert d == {'k': 1} and s == {2}\nassert keep[0] is d and keep[1] is s",
            "fill",
        ),
    ),
    "nested containers changed in place keep their identity": (
        "def push(m):\n    m['a'].append(1)\n    m['b'][0][0] = 9\n    m['c'] = m['a']\n",
        "def push(m):\n    m['a'] = m['a'] + [1]\n",
        check(
            "row = [0]\ninner = []\nm = {'a': inner, 'b': [row, row]}\ncandidate(m)\n"
            "assert inner == [1] and m['a'] is inner\nassert m['b'][1][0] == 9 and row == [9]\n"
            "assert m['c'] is inner",
            "push",
        ),
    ),
    "a bytearray and a deque changed in place": (
        "def grow(b, q):\n    b.extend(b'!')\n    q.appendleft(0)\n",
        "def grow(b, q):\n    pass\n",
        mbpp(
            "import collections\nb = bytearray(b'hi')\nq = collections.deque([1])\n"
            "grow(b, q)\nassert b == bytearray(b'hi!') and list(q) == [0, 1]"
        ),
    ),
    "a mutated argument returned": (
        "def append_one(xs):\n    xs.append(1)\n    return xs\n",
        "def append_one(xs):\n    return xs + [1]\n",
        mbpp("ys = [0]\nassert append_one(ys) == [0, 1] and ys == [0, 1]"),
    ),
    # --- exceptions the program raises ---
    "a raises() helper in the tests (pytest.raises style)": (
        "def root(x):\n    if x < 0:\n        raise ValueError('negative')\n    return x ** 0.5\n",
        "def root(x):\n    return abs(x) ** 0.5\n",
        check(
            "class raises:\n    def __init__(self, kind): self.kind = kind\n"
            "    def __enter__(self): return self\n"
            "    def __exit__(self, t, e, tb):\n"
            "        assert t is not None and issubclass(t, self.kind), t\n"
            "        self.value = e\n        return True\n"
            "with raises(ValueError) as info:\n    candidate(-1)\n"
            "assert 'negative' in str(info.value)\nassert candidate(4) == 2",
            "root",
        ),
    ),
    "unittest's assertRaises, both forms": (
        "def pick(xs, i):\n    return xs[i]\n",
        "def pick(xs, i):\n    return xs[i] if i < len(xs) else None\n",
        mbpp(
            "import unittest\ntc = unittest.TestCase()\n"
            "with tc.assertRaises(IndexError):\n    pick([1], 5)\n"
            "tc.assertRaises(KeyError, pick, {}, 'x')\nassert pick([1, 2], 1) == 2"
        ),
    ),
    "try/except on a builtin class, args kept": (
        "def lookup(d, k):\n    return d[k]\n",
        "def lookup(d, k):\n    return d.get(k)\n",
        check(
            "try:\n    candidate({}, 'x')\nexcept KeyError as e:\n    assert e.args == ('x',)\n"
            "else:\n    assert False, 'no KeyError'",
            "lookup",
        ),
    ),
    "the program's own exception class, caught by its builtin base": (
        "class NegativeError(ValueError):\n    pass\n"
        "def check_positive(x):\n    if x < 0:\n        raise NegativeError(x)\n    return True\n",
        "def check_positive(x):\n    if x < 0:\n        raise TypeError(x)\n    return True\n",
        mbpp(
            "try:\n    check_positive(-2)\n    ok = False\nexcept ValueError as e:\n"
            "    ok = type(e).__name__ == 'NegativeError' and e.args == (-2,)\nassert ok"
        ),
    ),
    "the program's exception class raised through the tests' except Exception": (
        "class Oops(Exception):\n    pass\ndef boom():\n    raise Oops('no')\n",
        "def boom():\n    return 'no'\n",
        mbpp(
            "try:\n    boom()\n    caught = None\nexcept Exception as e:\n    caught = str(e)\n"
            "assert caught == 'no'"
        ),
    ),
    "an exception raised while iterating a returned generator": (
        "def gen():\n    yield 1\n    raise ZeroDivisionError('late')\n",
        "def gen():\n    yield 1\n",
        mbpp(
            "it = gen()\nassert next(it) == 1\ntry:\n    next(it)\n    late = False\n"
            "except ZeroDivisionError:\n    late = True\nassert late"
        ),
    ),
    "unittest.main in a test script": (
        "def add(a, b):\n    return a + b\n",
        "def add(a, b):\n    return a * b\n",
        {
            "test": "import unittest\n\nclass T(unittest.TestCase):\n"
            "    def test_add(self):\n        self.assertEqual(add(1, 2), 3)\n"
            "        self.assertAlmostEqual(add(0.1, 0.2), 0.3)\n\n"
            "unittest.main(argv=['tests'], verbosity=0)\n"
        },
    ),
    "unittest.main behind if __name__ == '__main__'": (
        "def add(a, b):\n    return a + b\n",
        "def add(a, b):\n    return a - b\n",
        {
            "test": "import unittest\n\nclass T(unittest.TestCase):\n"
            "    def test_add(self):\n        self.assertEqual(add(1, 2), 3)\n\n"
            "if __name__ == '__main__':\n    unittest.main()\n"
        },
    ),
    # --- generators and iterators the program returns ---
    "generators, map, filter, zip and enumerate objects": (
        "def squares(n):\n    for i in range(n):\n        yield i * i\n"
        "def strs(xs):\n    return map(str, xs)\ndef evens(xs):\n"
        "    return filter(lambda x: x % 2 == 0, xs)\n"
        "def pairs(a, b):\n    return zip(a, b)\ndef numbered(xs):\n    return enumerate(xs)\n",
        "def squares(n):\n    return iter([0, 1, 4, 9][:n] + [0])\n"
        "def strs(xs):\n    return map(repr, xs)\ndef evens(xs):\n    return iter(xs)\n"
        "def pairs(a, b):\n    return zip(b, a)\ndef numbered(xs):\n    return enumerate(xs, 1)\n",
        mbpp(
            "assert list(squares(4)) == [0, 1, 4, 9]",
            "assert sum(squares(3)) == 5 and next(squares(5)) == 0",
            "assert list(strs([1, 2])) == ['1', '2'] and list(evens(range(5))) == [0, 2, 4]",
            "assert dict(pairs('ab', [1, 2])) == {'a': 1, 'b': 2}",
            "assert list(numbered('xy')) == [(0, 'x'), (1, 'y')]",
        ),
    ),
    "an infinite generator read with islice, and a for loop": (
        "def naturals():\n    n = 0\n    while True:\n        yield n\n        n += 1\n",
        "def naturals():\n    n = 1\n    while True:\n        yield n\n        n += 1\n",
        mbpp(
            "import itertools\nassert list(itertools.islice(naturals(), 3)) == [0, 1, 2]\n"
            "total = 0\nfor x in naturals():\n    if x > 3:\n        break\n    total += x\n"
            "assert total == 6"
        ),
    ),
    "an iterable class of the program, iterated and measured": (
        "class Span:\n    def __init__(self, n): self.n = n\n"
        "    def __iter__(self): return iter(range(self.n))\n    def __len__(self): return self.n\n"
        "    def __getitem__(self, i): return list(range(self.n))[i]\n"
        "def span(n):\n    return Span(n)\n",
        "class Span:\n    def __init__(self, n): self.n = n\n"
        "    def __iter__(self): return iter(range(1, self.n))\n    def __len__(self): return 0\n"
        "    def __getitem__(self, i): return None\n"
        "def span(n):\n    return Span(n)\n",
        mbpp(
            "s = span(3)\nassert list(s) == [0, 1, 2] and len(s) == 3 and s[-1] == 2 and sorted(s) "
            "== [0, 1, 2]"
        ),
    ),
    # --- callables the tests pass in ---
    "an object of the program read again after its methods changed it": (
        "class Stack:\n    def __init__(self):\n        self.items = []\n"
        "    def push(self, x):\n        self.items.append(x)\n"
        "    def __len__(self):\n        return len(self.items)\n"
        "    def __getitem__(self, i):\n        return self.items[i]\n"
        "def make():\n    return Stack()\n",
        "class Stack:\n    def __init__(self):\n        self.items = []\n"
        "    def push(self, x):\n        self.items.insert(0, x)\n"
        "    def __len__(self):\n        return len(self.items)\n"
        "    def __getitem__(self, i):\n        return self.items[i]\n"
        "def make():\n    return Stack()\n",
        check(
            "s = candidate()\nassert len(s) == 0\ns.push(3)\nassert len(s) == 1 and s[0] == 3\n"
            "s.push(4)\nassert len(s) == 2 and s[1] == 4 and s.items == [3, 4]",
            "make",
        ),
    ),
    "an object read by the tests' callback while the program changes it": (
        "class Counter:\n    def __init__(self):\n        self.count = 0\n"
        "    def run(self, n, observer):\n        for _ in range(n):\n"
        "            self.count += 1\n            observer(self)\n"
        "def make():\n    return Counter()\n",
        "class Counter:\n    def __init__(self):\n        self.count = 0\n"
        "    def run(self, n, observer):\n        for _ in range(n):\n"
        "            observer(self)\n            self.count += 1\n"
        "def make():\n    return Counter()\n",
        check(
            "seen = []\nc = candidate()\nc.run(3, lambda obj: seen.append(obj.count))\n"
            "assert seen == [1, 2, 3] and c.count == 3",
            "make",
        ),
    ),
    "the tests catch their own callback's failed assert, come back through the program": (
        "def apply(f, x):\n    return f(x)\n",
        "def apply(f, x):\n    try:\n        return f(x)\n    except Exception:\n"
        "        return None\n",
        check(
            "def bad(x):\n    assert x > 0, 'negative'\n"
            "assert candidate(lambda v: v * 2, 3) == 6\n"
            "try:\n    candidate(bad, -1)\nexcept AssertionError:\n    pass\n"
            "else:\n    raise AssertionError('the failure came back')",
            "apply",
        ),
    ),
    "a list of complex numbers": (
        "def roots(n):\n    return [complex(k, -k) for k in range(n)]\n",
        "def roots(n):\n    return [complex(k, k) for k in range(n)]\n",
        {
            "fn_name": "roots",
            "inputs": [[100]],
            "outputs": [[complex(k, -k) for k in range(100)]],
        },
    ),
    "key functions: a lambda, a builtin, a method": (
        "def order(xs, key):\n    return sorted(xs, key=key)\n",
        "def order(xs, key):\n    return sorted(xs)\n",
        mbpp(
            "assert order(['bb', 'a', 'ccc'], key=len) == ['a', 'bb', 'ccc']",
            "assert order([3, -4, 1], key=lambda x: -abs(x)) == [-4, 3, 1]",
            "assert order(['b', 'A', 'c'], key=str.lower) == ['A', 'b', 'c']",
        ),
    ),
    "callbacks with state in the tests, and a class passed in": (
        "def each(xs, fn):\n    for x in xs:\n        fn(x)\n    return len(xs)\n"
        "def build(factory, n):\n    out = factory()\n    for i in range(n):\n"
        "        out.append(i)\n"
        "    return out\n",
        "def each(xs, fn):\n    fn(xs[0])\n    return len(xs)\n"
        "def build(factory, n):\n    return list(range(n + 1))\n",
        check(
            "seen = []\nassert candidate([1, 2, 3], seen.append) == 3\nassert seen == [1, 2, 3]\n"
            "assert build(list, 2) == [0, 1]",
            "each",
        ),
    ),
    "a callback that raises, a callback returned, a reduce": (
        "import functools\ndef safe(fn, x):\n    try:\n        return fn(x)\n"
        "    except Exception:\n"
        "        return 'failed'\ndef same(fn):\n    return fn\n"
        "def fold(fn, xs, start):\n    return functools.reduce(fn, xs, start)\n",
        "def safe(fn, x):\n    return fn(x)\ndef same(fn):\n    return lambda x: x\n"
        "def fold(fn, xs, start):\n    return start\n",
        mbpp(
            "assert safe(lambda x: 1 / x, 0) == 'failed' and safe(lambda x: 1 / x, 2) == 0.5",
            "def f(x):\n    return x + 1\nassert same(f) is f",
            "assert fold(lambda a, b: a * b, [2, 3, 4], 1) == 24",
        ),
    ),
    # --- LeetCode's class Solution and design classes ---
    "LeetCode: Solution().method with the prelude's ListNode and TreeNode": (
        "class Solution:\n    def reverseList(self, head):\n        prev = None\n"
        "        while head:\n            head.next, prev, head = prev, head, head.next\n"
        "        return prev\n"
        "    def invertTree(self, root):\n        if root:\n"
        "            root.left, root.right = self.invertTree(root.right),"
        " self.invertTree(root.left)\n"
        "        return root\n",
        "class Solution:\n    def reverseList(self, head):\n        return head\n"
        "    def invertTree(self, root):\n        return root\n",
        {
            "test": "def check(candidate):\n"
            "    assert is_same_list(candidate(list_node([1, 2, 3])), list_node([3, 2, 1]))\n"
            "    s = Solution()\n"
            "    assert is_same_tree(s.invertTree(tree_node([2, 1, 3])), tree_node([2, 3, 1]))\n"
            "    assert candidate(None) is None\n\n\ncheck(Solution().reverseList)\n",
            "prelude": "leetcode",
        },
    ),
    "a design class with state across calls": (
        "class MinStack:\n    def __init__(self):\n        self.items = []\n"
        "    def push(self, x):\n        self.items.append((x, min(x, self.getMin()) if self.items"
        " else x))\n    def pop(self):\n        self.items.pop()\n"
        "    def getMin(self):\n        return self.items[-1][1]\n",
        "class MinStack:\n    def __init__(self):\n        self.items = []\n"
        "    def push(self, x):\n        self.items.append(x)\n    def pop(self):\n"
        "        self.items.pop()\n    def getMin(self):\n        return self.items[0]\n",
        {
            "test": "def check(candidate):\n    s = MinStack()\n    s.push(3)\n    s.push(1)\n"
            "    s.push(2)\n    assert s.getMin() == 1\n    s.pop()\n    s.pop()\n"
            "    assert s.getMin() == 3\n    assert s.items == [(3, 3)]\n\n\ncheck(MinStack)\n",
            "prelude": "leetcode",
        },
    ),
    "call-based tests of a Solution method": (
        "class Solution:\n    def twoSum(self, nums, target):\n        seen = {}\n"
        "        for i, x in enumerate(nums):\n            if target - x in seen:\n"
        "                return [seen[target - x], i]\n            seen[x] = i\n",
        "class Solution:\n    def twoSum(self, nums, target):\n        return [0, 1]\n",
        {
            "fn_name": "twoSum",
            "inputs": [[[2, 7, 11], 9], [[3, 2, 4], 6]],
            "outputs": [[0, 1], [1, 2]],
        },
    ),
    # --- objects of the program's classes: opaque values ---
    "objects of the program's classes: attributes, methods, truth, passed back": (
        "class Point:\n    def __init__(self, x, y): self.x, self.y = x, y\n"
        "    def norm2(self): return self.x ** 2 + self.y ** 2\n"
        "    def __bool__(self): return bool(self.x or self.y)\n"
        "def make(x, y):\n    return Point(x, y)\n"
        "def dist2(p, q):\n    return (p.x - q.x) ** 2 + (p.y - q.y) ** 2\n",
        "class Point:\n    def __init__(self, x, y): self.x, self.y = y, x\n"
        "    def norm2(self): return 0\n"
        "def make(x, y):\n    return Point(x, y)\n"
        "def dist2(p, q):\n    return 1\n",
        mbpp(
            "p = make(3, 4)\nassert p.x == 3 and p.y == 4 and p.norm2() == 25",
            "assert make(1, 0) and not make(0, 0)",
            "p = make(1, 2)\nassert dist2(p, p) == 0 and dist2(p, make(1, 5)) == 9",
            "p = Point(2, 2)\nassert p.norm2() == 8",
        ),
    ),
    "an object of the program's class equals nothing, even itself": (
        "class Box:\n    def __eq__(self, other): return True\n    __hash__ = None\n"
        "def box():\n    return Box()\n",
        "def box():\n    return 1\n",
        mbpp("b = box()\nassert not (b == 1) and not (b == b) and b != 1 and repr(b)"),
    ),
    # --- a function named like a builtin ---
    "an MBPP function named sum, with len and abs real": (
        "def sum(xs):\n    total = 0\n    for x in xs:\n        total += x\n    return total\n",
        "def sum(xs):\n    return len(xs)\n",
        mbpp(
            "assert sum([1, 2, 3]) == 6",
            "assert sum([4]) == len([1, 2, 3, 4])",
            "assert abs(sum([0.5, 0.25]) - 0.75) < 1e-9",
        ),
    ),
    "an MBPP function named set, with sorted real": (
        "def set(xs):\n    out = []\n    for x in xs:\n        if x not in out:\n"
        "            out.append(x)\n    return out\n",
        "def set(xs):\n    return list(xs)\n",
        mbpp("assert set([1, 2, 2, 3]) == [1, 2, 3]", "assert sorted(set([3, 3, 1])) == [1, 3]"),
    ),
    "an entry point named max, and the program's helper sorted not used by the tests": (
        "def sorted(xs):\n    return []\ndef max(xs):\n    best = xs[0]\n    for x in xs:\n"
        "        best = x if x > best else best\n    return best\n",
        "def max(xs):\n    return xs[0]\n",
        check(
            "assert candidate([1, 3, 2]) == 3\nassert sorted([candidate([2, 5]), 1]) == [1, 5]",
            "max",
        ),
    ),
    "a helper named like a builtin the tests call for real": (
        "def sorted(xs):\n    return []\ndef f(xs):\n    return [3, 1, 2]\n",
        "def f(xs):\n    return [3, 1]\n",
        mbpp("assert sorted(f([1, 2, 3])) == [1, 2, 3]"),
    ),
    # --- values ---
    "big integers both ways": (
        "def square(x):\n    return x * x\n",
        "def square(x):\n    return x * x + 1\n",
        mbpp(
            "assert square(10**30) == 10**60",
            "assert square(-(2**70)) == 2**140",
            "assert square(10**3000) == 10**6000",
        ),
    ),
    "floats: NaN, infinities, -0.0, rounding": (
        "import math\ndef f(x):\n"
        "    return {'nan': math.nan, 'inf': math.inf, '-0': -0.0}.get(x, 0.1 + 0.2)\n",
        "def f(x):\n    return 0.0\n",
        mbpp(
            "import math\nassert math.isnan(f('nan')) and f('inf') == float('inf')",
            "import math\nassert math.copysign(1, f('-0')) == -1.0",
            "assert f('x') != 0.3 and abs(f('x') - 0.3) < 1e-12",
        ),
    ),
    "bytes, bytearray, str with every code point": (
        "def rev(b):\n    return b[::-1]\n",
        "def rev(b):\n    return b\n",
        mbpp(
            "assert rev(b'ab\\x00\\xff') == b'\\xff\\x00ba' and isinstance(rev(b'x'), bytes)",
            "assert rev(bytearray(b'ab')) == bytearray(b'ba')",
            "assert rev('a\\u00e9\\U0001f600\\ud800') == '\\ud800\\U0001f600\\u00e9a'",
        ),
    ),
    "sets, frozensets, tuples versus lists, dicts with tuple keys": (
        "def shapes():\n    return {'set': {1, 2}, 'frozen': frozenset({3}), 'tuple': (1, 2),"
        " 'list': [1, 2], 'keys': {(0, 1): [2]}, 'none': None, 'true': True}\n",
        "def shapes():\n    return {'set': [1, 2], 'frozen': {3}, 'tuple': [1, 2], 'list': (1, 2),"
        " 'keys': {'(0, 1)': [2]}, 'none': 0, 'true': 1}\n",
        mbpp(
            "s = shapes()\nassert s['set'] == {1, 2} and isinstance(s['set'], set)",
            "s = shapes()\n"
            "assert s['frozen'] == frozenset({3}) and isinstance(s['frozen'], frozenset)",
            "s = shapes()\nassert s['tuple'] == (1, 2) and s['tuple'] != [1, 2]",
            "s = shapes()\nassert s['list'] == [1, 2] and type(s['list']) is list",
            "s = shapes()\n"
            "assert s['keys'] == {(0, 1): [2]} and s['none'] is None and s['true'] is True",
        ),
    ),
    "namedtuple, Counter, OrderedDict, defaultdict, deque, range, Fraction, Decimal, complex": (
        "import collections, fractions, decimal\nP = collections.namedtuple('P', 'x y')\n"
        "def values():\n    d = collections.defaultdict(list)\n    d['a'].append(1)\n"
        "    return [P(1, 2), collections.Counter('aab'), collections.OrderedDict(b=1, a=2), d,"
        " collections.deque([1, 2]), range(3), fractions.Fraction(1, 3), decimal.Decimal('1.1'),"
        " 1 + 2j]\n",
        "def values():\n    return [(2, 1), {}, {}, {}, [], [], 0, 0, 0]\n",
        mbpp(
            "v = values()\nassert v[0] == (1, 2) and v[0].x == 1 and v[0].y == 2",
            "v = values()\nassert v[1] == {'a': 2, 'b': 1} and v[1].most_common(1) == [('a', 2)]",
            "v = values()\n"
            "assert list(v[2]) == ['b', 'a'] and v[3]['a'] == [1] and v[3]['z'] == []",
            "v = values()\nassert list(v[4]) == [1, 2] and v[5] == range(3)",
            "import fractions, decimal\nv = values()\n"
            "assert v[6] * 3 == 1 and v[7] == decimal.Decimal('1.1') and v[8].imag == 2",
        ),
    ),
    "shared references and cycles in a returned value": (
        "def shared():\n    a = [1]\n    out = [a, a]\n    out.append(out)\n    return out\n",
        "def shared():\n    out = [[1], [1]]\n    out.append([])\n    return out\n",
        mbpp("r = shared()\nassert r[0] is r[1] and r[2] is r"),
    ),
}


def _run(items: list[dict[str, Any]], runtime: LocalRuntime) -> list[verifiers.Result]:
    return verifiers.score_batch(items, runtime=runtime, limits={"timeout_s": 10})


def _check_feature(
    language: str, name: str, entry: tuple[str, str, Any], runtime: LocalRuntime
) -> None:
    right, wrong, tests = entry
    items = [{"language": language, "completion": c, "tests": tests} for c in (right, wrong)]
    good, bad = _run(items, runtime)
    assert good.ok, (name, good.status, good.feedback)
    assert bad.status in (Status.FAILED, Status.RUNTIME_ERROR), (name, bad.status, bad.feedback)
    assert bad.passed < bad.total, (name, bad.feedback)


@pytest.mark.parametrize("name", list(PYTHON))
def test_python_feature(runtime: LocalRuntime, name: str) -> None:
    _check_feature("python", name, PYTHON[name], runtime)


def test_an_expression_test_calls_a_builtin_named_function_and_keeps_the_others(
    runtime: LocalRuntime,
) -> None:
    code = "def max(xs):\n    return sorted(xs)[-1]\n"
    tests = [["max([1, 5, 2])", 5], ["abs(max([-3, -1]))", 1], ["len([max([1])])", 1]]
    r = verifiers.score("python", code, tests, runtime=runtime)
    assert r.ok, r.feedback
    wrong = verifiers.score("python", "def max(xs):\n    return xs[0]\n", tests, runtime=runtime)
    assert not wrong.ok


# --- JavaScript (HumanEval-X style) ------------------------------------------------------------

JS_ASSERT = "const assert = require('node:assert')\n"

JAVASCRIPT: dict[str, tuple[str, str, Any]] = {
    "arrays and objects changed in place": (
        "function sortInPlace(xs) { xs.sort((a, b) => a - b); }\n"
        "function tag(o) { o.seen = true; o.inner.push(1); }\n",
        "function sortInPlace(xs) { xs = [...xs].sort(); }\nfunction tag(o) { o = {}; }\n",
        {
            "test": JS_ASSERT + "const xs = [3, 10, 2]\nsortInPlace(xs)\n"
            "assert.deepStrictEqual(xs, [2, 3, 10])\n"
            "const inner = []\nconst o = { inner }\ntag(o)\n"
            "assert.strictEqual(o.seen, true)\nassert.strictEqual(o.inner, inner)\n"
            "assert.deepStrictEqual(inner, [1])\n"
        },
    ),
    "errors: assert.throws with a class, try/catch, the program's own Error subclass": (
        "class NegativeError extends RangeError { constructor(m) { super(m);"
        " this.name = 'NegativeError'; } }\n"
        "function root(x) { if (x < 0) throw new NegativeError('negative'); return"
        " Math.sqrt(x); }\n"
        "function parse(s) { return JSON.parse(s); }\n",
        "function root(x) { return Math.sqrt(Math.abs(x)); }\nfunction parse(s) { return null; }\n",
        {
            "test": JS_ASSERT + "assert.throws(() => root(-1), RangeError)\n"
            "assert.throws(() => parse('{'), SyntaxError)\n"
            "let caught = null\ntry { root(-4) } catch (e) { caught = e }\n"
            "console.assert(caught instanceof Error && caught.name === 'NegativeError')\n"
            "console.assert(caught.message === 'negative')\nconsole.assert(root(9) === 3)\n"
        },
    ),
    "generators and iterators": (
        "function* range(n) { for (let i = 0; i < n; i++) yield i; }\n"
        "function entries(m) { return new Map(m).entries(); }\n",
        "function* range(n) { for (let i = 1; i < n; i++) yield i; }\n"
        "function entries(m) { return [].values(); }\n",
        {
            "test": JS_ASSERT + "assert.deepStrictEqual([...range(3)], [0, 1, 2])\n"
            "let total = 0\nfor (const x of range(4)) total += x\nconsole.assert(total === 6)\n"
            "assert.deepStrictEqual(Array.from(entries([['a', 1]])), [['a', 1]])\n"
        },
    ),
    "callbacks the tests pass in": (
        "function myMap(xs, fn) { return xs.map((x) => fn(x)); }\n"
        "function each(xs, fn) { for (const x of xs) fn(x); return xs.length; }\n",
        "function myMap(xs, fn) { return xs; }\nfunction each(xs, fn) { return xs.length; }\n",
        {
            "test": JS_ASSERT + "assert.deepStrictEqual(myMap([1, 2], (x) => x * 10), [10, 20])\n"
            "const seen = []\nconsole.assert(each([1, 2, 3], (x) => seen.push(x)) === 3)\n"
            "assert.deepStrictEqual(seen, [1, 2, 3])\n"
        },
    ),
    "a class of the program: construct, call methods, read fields": (
        "class Stack { constructor() { this.items = []; } push(x) { this.items.push(x); return"
        " this.items.length; } pop() { return this.items.pop(); } }\n",
        "class Stack { constructor() { this.items = []; } push(x) { return 0; } pop() {"
        " return undefined; } }\n",
        {
            "test": JS_ASSERT + "const s = new Stack()\nconsole.assert(s.push(1) === 1)\n"
            "s.push(2)\nconsole.assert(s.pop() === 2)\nassert.deepStrictEqual(s.items, [1])\n"
        },
    ),
    "a returned object's functions called by name (its conversion hooks never)": (
        "function shape(w, h) {\n  return { w, h, area: () => w * h,"
        " scale: (k) => shape(w * k, h * k), toString: () => `${w}x${h}` };\n}\n",
        "function shape(w, h) {\n  return { w, h, area: () => w + h,"
        " scale: (k) => shape(w, h) };\n}\n",
        {
            "test": JS_ASSERT + "const s = shape(2, 3)\n"
            "console.assert(s.area() === 6 && s.w === 2 && s.scale(2).area() === 24)\n"
            "assert.throws(() => `${s}`, TypeError)\nassert.throws(() => s.toString(), TypeError)\n"
            "assert.strictEqual(JSON.stringify([s.w, s.h]), '[2,3]')\n"
        },
    ),
    "values: BigInt, NaN, -0, undefined, null, Map, Set, Date, typed arrays, nesting": (
        "function values() { return [2n ** 70n, NaN, -0, undefined, null, new Map([[1, 'a']]),"
        " new Set([1]), new Date(0), Uint8Array.from([1, 2]), { a: [{ b: 1 }] }]; }\n",
        "function values() { return [2 ** 70, 0, 0, null, undefined, {}, [], 0, [1, 2], {}]; }\n",
        {
            "test": JS_ASSERT + "const v = values()\n"
            "console.assert(v[0] === 1180591620717411303424n)\n"
            "console.assert(Number.isNaN(v[1]) && Object.is(v[2], -0))\n"
            "console.assert(v[3] === undefined && v[4] === null)\n"
            "console.assert(v[5] instanceof Map && v[5].get(1) === 'a' && v[6].has(1))\n"
            "console.assert(v[7].getTime() === 0)\n"
            "assert.deepStrictEqual(v[8], Uint8Array.from([1, 2]))\n"
            "assert.deepStrictEqual(v[9], { a: [{ b: 1 }] })\n"
        },
    ),
    "a HumanEval-X style test with a helper of the tests": (
        "const sumSquares = (xs) => xs.reduce((s, x) => s + x * x, 0);\n",
        "const sumSquares = (xs) => xs.reduce((s, x) => s + x, 0);\n",
        {
            "test": "const testSumSquares = () => {\n"
            "  const close = (a, b) => Math.abs(a - b) < 1e-9\n"
            "  console.assert(sumSquares([1, 2, 3]) === 14)\n"
            "  console.assert(close(sumSquares([0.5]), 0.25))\n"
            "  console.assert(JSON.stringify([sumSquares([])]) === '[0]')\n"
            "}\n\ntestSumSquares()\n"
        },
    ),
}


@pytest.mark.parametrize("name", list(JAVASCRIPT))
def test_javascript_feature(runtime: LocalRuntime, name: str) -> None:
    _check_feature("javascript", name, JAVASCRIPT[name], runtime)
