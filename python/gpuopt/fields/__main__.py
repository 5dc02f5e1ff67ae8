"""``python -m gpuopt.fields > references/fields.md``."""

from gpuopt.fields import markdown

print(markdown())
