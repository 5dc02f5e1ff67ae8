from gpuopt.cli import main

main()
