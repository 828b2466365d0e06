import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[3]


def test_package_imports_with_django_absent():
    # A None entry in sys.modules makes "import django" raise ImportError, as if
    # Django were not installed.
    code = (
        "import sys\n"
        "for name in ('django', 'rest_framework', 'celery'): sys.modules[name] = None\n"
        "import review.evaluation, review.evaluation.metrics, review.evaluation.evaluate\n"
        "import review.evaluation.reference, review.evaluation.report, review.evaluation.agreement\n"
        "assert not any(m == 'django' or m.startswith('django.') for m in sys.modules"
        " if sys.modules[m] is not None)\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, timeout=60
    )
    assert completed.returncode == 0, completed.stderr
