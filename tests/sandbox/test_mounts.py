"""A lease's mounts: folders of files written into the sandbox before its prelude, read-only, importable and
counted if asked, and gone (with anything written into them) before the next lease."""

import pytest

from harness.sandbox import Mount, SandboxPolicy

pytestmark = pytest.mark.sandbox

PACKAGE = {"pkg/__init__.py": '"""A package."""\n', "pkg/tool.py": "def answer():\n    return 42\n"}


def nothing(name, arguments):
    return None


async def test_a_mount_is_importable_read_only_and_its_reads_are_counted(sandbox_pool):
    mount = Mount("/mnt/one", PACKAGE, importable=True, count_reads=True)
    async with sandbox_pool.lease(nothing, mounts=(mount,)) as sandbox:
        run = await sandbox.execute("from pkg.tool import answer\nprint(answer())\n"
                                    "print(open('/mnt/one/pkg/tool.py').read().splitlines()[0])\n"
                                    "import io\nio.open('/mnt/one/pkg/__init__.py').close()\n"
                                    "try:\n    open('/mnt/one/pkg/tool.py', 'w')\nexcept OSError:\n    print('refused')\n"
                                    "try:\n    open('/mnt/one/pkg/new.py', 'w')\nexcept OSError:\n    print('refused')",
                                    check_policy=False)
        assert run.stdout.split("\n")[:4] == ["42", "def answer():", "refused", "refused"]
        assert run.files_read[:2] == ("/mnt/one/pkg/tool.py", "/mnt/one/pkg/__init__.py")
        again = await sandbox.execute("print(1)", check_policy=False)
        assert again.files_read == ()  # each execution reports its own reads


async def test_the_next_lease_sees_neither_the_mount_nor_its_modules_nor_a_count(sandbox_pool):
    restarts = sandbox_pool.stats().restarts
    async with sandbox_pool.lease(nothing, mounts=(Mount("/mnt/one", PACKAGE, importable=True, count_reads=True),)):
        pass
    other = {"other/__init__.py": "NAME = 'other'\n"}
    async with sandbox_pool.lease(nothing, mounts=(Mount("/mnt/two", other, importable=True),)) as sandbox:
        run = await sandbox.execute("import os, sys\nprint(os.path.exists('/mnt/one'), 'pkg' in sys.modules, "
                                    "'/mnt/one' in sys.path)\nimport other\nprint(other.NAME)\n"
                                    "open('/mnt/two/other/__init__.py').close()", check_policy=False)
        assert run.stdout.split("\n")[:2] == ["False False False", "other"] and run.files_read == ()
    async with sandbox_pool.lease(nothing) as sandbox:
        run = await sandbox.execute("import os\nprint(os.path.exists('/mnt/two'), os.path.exists('/mnt'))",
                                    check_policy=False)
        assert run.stdout.strip() == "False False"
    assert sandbox_pool.stats().restarts == restarts  # undone by the reset, not by replacing the process


async def test_a_writable_mount_takes_writes_and_a_lease_policy_replaces_the_pools(sandbox_pool):
    policy = SandboxPolicy().allowing(imports=frozenset({"os"}), calls=frozenset({"open"}))
    async with sandbox_pool.lease(nothing, mounts=(Mount("/work", {"notes.txt": "a"}, read_only=False),),
                                  policy=policy) as sandbox:
        run = await sandbox.execute("import os\nopen('/work/notes.txt', 'a').write('b')\n"
                                    "print(open('/work/notes.txt').read(), os.listdir('/work'))")
        assert run.error is None and run.stdout.strip() == "ab ['notes.txt']"
    async with sandbox_pool.lease(nothing) as sandbox:
        refused = await sandbox.execute("import os")
        assert refused.error_kind == "policy"  # the pool's own policy again


async def test_a_mount_is_written_again_after_a_crash_restarts_the_sandbox(sandbox_pool):
    mount = Mount("/mnt/one", PACKAGE, importable=True)
    async with sandbox_pool.lease(nothing, mounts=(mount,)) as sandbox:
        timed_out = await sandbox.execute("while True:\n    pass", timeout_s=2)
        assert timed_out.error_kind == "code_timeout"
        run = await sandbox.execute("from pkg.tool import answer\nprint(answer())", check_policy=False)
        assert run.stdout.strip() == "42", run.error


async def test_mounting_again_in_the_same_lease_starts_clean(sandbox_pool):
    # the interpreter's start and the lease's install can both define a lease (a pool warmed while a run leases)
    mount = Mount("/mnt/one", PACKAGE, importable=True, count_reads=True)
    async with sandbox_pool.lease(nothing, mounts=(mount,)) as sandbox:
        again = await sandbox.execute(f"import __main__\n{mount.install_code().replace('_loads', '__main__._loads')}"
                                      .replace("_harness_mount", "__main__._harness_mount", 1), check_policy=False)
        assert again.error is None
        run = await sandbox.execute("import sys\nfrom pkg.tool import answer\nprint(answer(), sys.path.count('/mnt/one'))\n"
                                    "open('/mnt/one/pkg/tool.py').close()", check_policy=False)
        assert run.stdout.strip() == "42 1" and run.files_read == ("/mnt/one/pkg/tool.py",)
